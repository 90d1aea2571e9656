import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
import type { ProviderServer, ScriptStep } from '../../support/providerServer.js';
import {
  checkoutPath,
  closeSessionFixture,
  eventsOf,
  newSessionArgs,
  onlySessionId,
  rejected,
  startSessionFixture,
} from '../../support/sessionFixture.js';

// A multi-file apply_patch killed (KEEL_CRASH_AT, SIGKILL) after tool_call_started, before and after its
// writes landed, then `keel resume`: the per-file images it recorded settle it at most once, and the project
// folder ends with exactly one application of the patch.

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  ({ dir, home, project, server } = await startSessionFixture('keel-patch-crash-'));
  fs.mkdirSync(path.join(project, 'src'), { recursive: true });
  fs.writeFileSync(path.join(project, 'src', 'server.go'), 'package main\n\nfunc main() {}\n');
  fs.writeFileSync(path.join(project, 'NOTES.md'), 'notes\n');
});

afterEach(async () => {
  await closeSessionFixture({ dir, server });
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
  server.enqueue(PATCH);
  const run = await keel(
    home,
    newSessionArgs({ project, server }, { policy: 'full-auto', prompt: 'patch' }),
    {
      KEEL_CRASH_AT: point,
    },
  );
  expect(run.signal, run.stderr).toBe('SIGKILL');
  return onlySessionId(home);
}

describe('apply_patch crash campaign', () => {
  it('after_tool_started: nothing had landed; resume applies the patch once', async () => {
    const id = await crashed('after_tool_started');
    expect(read(checkoutPath(home, id, 'src/server.go'))).toBe('package main\n\nfunc main() {}\n');
    expect(fs.existsSync(checkoutPath(home, id, 'src/serve.go'))).toBe(false);
    server.enqueue({ kind: 'reply', text: 'patched' });
    expect((await keel(home, ['resume', id])).code).toBe(0);
    const results = eventsOf(home, id).filter((e) => e.kind === 'tool_result');
    expect(results).toHaveLength(1);
    expect(results[0]?.kind === 'tool_result' && results[0].content).toMatch(/^Applied the patch to 3 files/);
    expectPatched(project);
    expect(rejected(server)).toEqual([]);
  });

  it('after_tool_executed_before_result: the patch had landed; resume recognises every file and writes nothing', async () => {
    const id = await crashed('after_tool_executed_before_result');
    expectPatched(checkoutPath(home, id, ''));
    // The crash committed nothing to the folder yet.
    expect(read(path.join(project, 'NOTES.md'))).toBe('notes\n');
    server.enqueue({ kind: 'reply', text: 'patched' });
    expect((await keel(home, ['resume', id])).code).toBe(0);
    const result = eventsOf(home, id).find((e) => e.kind === 'tool_result');
    expect(result?.kind === 'tool_result' && result.content).toMatch(
      /^already applied: src\/server\.go, src\/serve\.go, NOTES\.md/,
    );
    expectPatched(project);
  });
});
