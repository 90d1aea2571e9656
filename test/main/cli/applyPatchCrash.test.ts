import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliFixture } from '../../support/cliFixture.js';
import { keel } from '../../support/keelProcess.js';
import type { ScriptStep } from '../../support/providerServer.js';
import {
  checkoutPath,
  eventsOf,
  newSessionArgs,
  onlySessionId,
  rejected,
} from '../../support/sessionFixture.js';

// A multi-file apply_patch killed (KEEL_CRASH_AT, SIGKILL) after tool_call_started, before and after its
// writes landed, then `keel resume`: the per-file images it recorded settle it at most once, and the project
// folder ends with exactly one application of the patch.

const cli = useCliFixture('keel-patch-crash-', {
  prepare: ({ project }) => {
    fs.mkdirSync(path.join(project, 'src'), { recursive: true });
    fs.writeFileSync(path.join(project, 'src', 'server.go'), 'package main\n\nfunc main() {}\n');
    fs.writeFileSync(path.join(project, 'NOTES.md'), 'notes\n');
  },
});

const PATCH: ScriptStep = {
  kind: 'reply',
  toolCalls: [
    {
      name: 'apply_patch',
      arguments: {
        input: [
          '*** Begin Patch',
          '*** Update File: src/server.go',
          '@@',
          '-func main() {}',
          '+func main() { serve() }',
          '*** Add File: src/serve.go',
          '+package main',
          '*** Delete File: NOTES.md',
          '*** End Patch',
        ].join('\n'),
      },
    },
  ],
};

const read = (file: string) => fs.readFileSync(file, 'utf8');

/** The project folder holds the patch applied exactly once. */
function expectPatched(root: string) {
  expect(read(path.join(root, 'src/server.go'))).toBe('package main\n\nfunc main() { serve() }\n');
  expect(read(path.join(root, 'src/serve.go'))).toBe('package main\n');
  expect(fs.existsSync(path.join(root, 'NOTES.md'))).toBe(false);
}

async function crashed(point: string) {
  cli.server.enqueue(PATCH);
  await cli.killedAt(newSessionArgs(cli, { policy: 'full-auto', prompt: 'patch' }), {
    KEEL_CRASH_AT: point,
  });
  return onlySessionId(cli.home);
}

describe('apply_patch crash campaign', () => {
  it('after_tool_started: nothing had landed; resume applies the patch once', async () => {
    const id = await crashed('after_tool_started');
    expect(read(checkoutPath(cli.home, id, 'src/server.go'))).toBe('package main\n\nfunc main() {}\n');
    expect(fs.existsSync(checkoutPath(cli.home, id, 'src/serve.go'))).toBe(false);
    cli.server.enqueue({ kind: 'reply', text: 'patched' });
    expect((await keel(cli.home, ['resume', id])).code).toBe(0);
    const results = eventsOf(cli.home, id).filter((e) => e.kind === 'tool_result');
    expect(results).toHaveLength(1);
    expect(results[0]?.kind === 'tool_result' && results[0].content).toMatch(/^Applied the patch to 3 files/);
    expectPatched(cli.project);
    expect(rejected(cli.server)).toEqual([]);
  });

  it('after_tool_executed_before_result: the patch had landed; resume recognises every file and writes nothing', async () => {
    const id = await crashed('after_tool_executed_before_result');
    expectPatched(checkoutPath(cli.home, id, ''));
    // The crash committed nothing to the folder yet.
    expect(read(path.join(cli.project, 'NOTES.md'))).toBe('notes\n');
    cli.server.enqueue({ kind: 'reply', text: 'patched' });
    expect((await keel(cli.home, ['resume', id])).code).toBe(0);
    const result = eventsOf(cli.home, id).find((e) => e.kind === 'tool_result');
    expect(result?.kind === 'tool_result' && result.content).toMatch(
      /^already applied: src\/server\.go, src\/serve\.go, NOTES\.md/,
    );
    expectPatched(cli.project);
  });
});
