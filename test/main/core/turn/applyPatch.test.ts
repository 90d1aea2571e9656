import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ToolCallStarted,
  type EventOf,
  type Policy,
  type SessionEvent,
} from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { runTurn } from '../../../../main/core/turn/engine.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

// apply_patch through the real turn engine, the scripted provider speaking the OpenAI wire format: the
// approval request shows one diff of every file, a grant covers a patch only when it covers every path,
// an approved patch whose files changed is not applied, and a call started but never recorded is settled
// by its recorded per-file images at most once.

const fx = useTurnHostFixture('keel-turn-patch-', {
  prepare: ({ project }) => {
    mkdirSync(path.join(project, 'src'), { recursive: true });
    writeFileSync(path.join(project, 'src', 'server.go'), 'package main\n\nfunc main() {}\n');
    writeFileSync(path.join(project, 'README.md'), '# demo\n');
  },
});

const createSession = (policy: Policy): SessionLog => fx.createSession({ policy, toolMode: 'write' });
const file = (rel: string): string => readFileSync(path.join(fx.project, rel), 'utf8');

const PATCH = [
  '*** Begin Patch',
  '*** Update File: src/server.go',
  '@@',
  '-func main() {}',
  '+func main() { serve() }',
  '*** Add File: src/limit.go',
  '+package main',
  '*** Update File: README.md',
  '@@',
  ' # demo',
  '+Rate limited.',
  '*** End Patch',
].join('\n');
const patchCall = (id = 'p1', input = PATCH) => ({
  kind: 'reply' as const,
  toolCalls: [{ id, name: 'apply_patch', arguments: { input } }],
});
const AFTER = {
  'src/server.go': 'package main\n\nfunc main() { serve() }\n',
  'src/limit.go': 'package main\n',
  'README.md': '# demo\nRate limited.\n',
};

function lastOf<K extends SessionEvent['kind']>(log: SessionLog, kind: K): EventOf<K> | undefined {
  return log
    .read()
    .filter((event): event is EventOf<K> => event.kind === kind)
    .at(-1);
}

describe('apply_patch in a turn', () => {
  it('is offered to the model, asks once with a diff of every file, and applies all of them after the grant', async () => {
    const log = createSession('ask');
    fx.server.enqueue(patchCall());
    expect((await runTurn(fx.hostFor(log), { prompt: 'add rate limiting' })).status).toBe(
      'awaiting_approval',
    );
    const tools = (fx.server.requests[0]?.body as { tools: { function: { name: string } }[] }).tools;
    expect(tools.map((t) => t.function.name)).toContain('apply_patch');
    const request = lastOf(log, 'approval_request');
    expect(request?.tool).toBe('apply_patch');
    expect(request?.diff).toContain('--- a/src/server.go\n+++ b/src/server.go');
    expect(request?.diff).toContain('--- /dev/null\n+++ b/src/limit.go');
    expect(request?.diff).toContain('--- a/README.md\n+++ b/README.md');
    expect(existsSync(path.join(fx.project, 'src/limit.go'))).toBe(false);

    log.append({ kind: 'approval_granted', requestSeq: request?.seq ?? 0, scope: 'once' });
    fx.server.enqueue({ kind: 'reply', text: 'Done.' });
    expect(await runTurn(fx.hostFor(log))).toEqual({ status: 'completed', text: 'Done.' });
    for (const [rel, text] of Object.entries(AFTER)) expect(file(rel)).toBe(text);
    const started = lastOf(log, 'tool_call_started');
    expect(started?.files?.map((f) => [f.path, f.preImageHash === null, f.postImageHash === null])).toEqual([
      ['src/server.go', false, false],
      ['src/limit.go', true, false],
      ['README.md', false, false],
    ]);
    expect(started?.postImageHash).toMatch(/^[0-9a-f]{64}$/);
    const result = lastOf(log, 'tool_result');
    expect(result?.content).toMatch(/^Applied the patch to 3 files:\nM src\/server\.go/);
    const tool = (
      fx.server.requests[1]?.body as { messages: { role: string; content: string }[] }
    ).messages.at(-1);
    expect(tool?.role).toBe('tool');
    expect(tool?.content).toContain('A src/limit.go (+1 -0)');
  });

  it('a path grant pre-authorises a patch only when every file is under it', async () => {
    const log = createSession('ask');
    fx.server.enqueue(
      patchCall('p1', PATCH.replace(/\*\*\* Update File: README\.md[\s\S]*Rate limited\.\n/, '')),
    );
    await runTurn(fx.hostFor(log), { prompt: 'go' });
    const request = lastOf(log, 'approval_request');
    log.append({ kind: 'approval_granted', requestSeq: request?.seq ?? 0, scope: 'path:src/**' });
    // The next patch stays under src/: no question. The one after touches README.md too: asked.
    fx.server.enqueue(
      patchCall('p2', ['*** Begin Patch', '*** Add File: src/b.go', '+b', '*** End Patch'].join('\n')),
      patchCall(
        'p3',
        [
          '*** Begin Patch',
          '*** Add File: src/c.go',
          '+c',
          '*** Delete File: README.md',
          '*** End Patch',
        ].join('\n'),
      ),
    );
    expect((await runTurn(fx.hostFor(log))).status).toBe('awaiting_approval');
    expect(file('src/b.go')).toBe('b\n');
    expect(lastOf(log, 'approval_request')?.toolCallId).toBe('p3');
    expect(existsSync(path.join(fx.project, 'src/c.go'))).toBe(false);
    expect(file('README.md')).toBe('# demo\n');
  });

  it('in full-auto, a patch touching a protected path asks, naming the file, and writes none of its files first', async () => {
    const log = createSession('full-auto');
    fx.server.enqueue(
      patchCall(
        'p1',
        [
          '*** Begin Patch',
          '*** Add File: src/ok.go',
          '+package main',
          '*** Add File: .vscode/tasks.json',
          '+{}',
          '*** End Patch',
        ].join('\n'),
      ),
    );
    expect((await runTurn(fx.hostFor(log), { prompt: 'go' })).status).toBe('awaiting_approval');
    const request = lastOf(log, 'approval_request');
    expect(request?.reason).toMatch(/\.vscode\/tasks\.json: /);
    expect(existsSync(path.join(fx.project, 'src/ok.go'))).toBe(false);
    expect(existsSync(path.join(fx.project, '.vscode'))).toBe(false);
    log.append({ kind: 'approval_granted', requestSeq: request?.seq ?? 0, scope: 'once' });
    fx.server.enqueue({ kind: 'reply', text: 'ok' });
    await runTurn(fx.hostFor(log));
    expect(file('.vscode/tasks.json')).toBe('{}\n');
    expect(file('src/ok.go')).toBe('package main\n');
  });

  it('approved, then a file changed before it ran: not applied, and no file of the patch is written', async () => {
    const log = createSession('ask');
    fx.server.enqueue(patchCall());
    await runTurn(fx.hostFor(log), { prompt: 'go' });
    const request = lastOf(log, 'approval_request');
    log.append({ kind: 'approval_granted', requestSeq: request?.seq ?? 0, scope: 'once' });
    writeFileSync(path.join(fx.project, 'README.md'), '# demo\n\nEdited by the user.\n');
    fx.server.enqueue({ kind: 'reply', text: 'ok' });
    await runTurn(fx.hostFor(log));
    const result = lastOf(log, 'tool_result');
    expect(result?.isError).toBe(true);
    expect(result?.content).toMatch(/changed after the edit was approved/);
    expect(file('src/server.go')).toBe('package main\n\nfunc main() {}\n');
    expect(existsSync(path.join(fx.project, 'src/limit.go'))).toBe(false);
    expect(lastOf(log, 'tool_call_started')).toBeUndefined();
  });
});

describe('apply_patch started but never recorded (a crash): settled at most once by its images', () => {
  /** Runs the patch in full-auto, then a second log holding the events up to its tool_call_started. */
  async function crashedAfterStart(): Promise<SessionLog> {
    const log = createSession('full-auto');
    fx.server.enqueue(patchCall());
    await runTurn(fx.hostFor(log, { maxSteps: 1 }), { prompt: 'go' });
    const events = log.read();
    const cut = events.findIndex((e) => e.kind === 'tool_call_started');
    const id = SessionLog.importEvents(path.join(fx.dir, 'replay'), events.slice(0, cut + 1));
    const replay = SessionLog.open(path.join(fx.dir, 'replay'), id, { write: true });
    fx.track(replay);
    return replay;
  }
  const restore = () => {
    writeFileSync(path.join(fx.project, 'src', 'server.go'), 'package main\n\nfunc main() {}\n');
    writeFileSync(path.join(fx.project, 'README.md'), '# demo\n');
    rmSync(path.join(fx.project, 'src/limit.go'), { force: true });
  };

  it('the patch had landed: already applied, nothing written again', async () => {
    const replay = await crashedAfterStart();
    fx.server.enqueue({ kind: 'reply', text: 'done' });
    await runTurn(fx.hostFor(replay));
    expect(lastOf(replay, 'tool_result')?.content).toMatch(
      /^already applied: src\/server\.go, src\/limit\.go, README\.md/,
    );
    for (const [rel, text] of Object.entries(AFTER)) expect(file(rel)).toBe(text);
  });

  it('the patch had not landed: applied once on resume', async () => {
    const replay = await crashedAfterStart();
    restore();
    fx.server.enqueue({ kind: 'reply', text: 'done' });
    await runTurn(fx.hostFor(replay));
    expect(lastOf(replay, 'tool_result')?.content).toMatch(/^Applied the patch to 3 files/);
    for (const [rel, text] of Object.entries(AFTER)) expect(file(rel)).toBe(text);
  });

  it('half of it had landed (or a file changed): conflict naming the files, nothing written', async () => {
    const replay = await crashedAfterStart();
    restore();
    writeFileSync(path.join(fx.project, 'src/limit.go'), 'package main\n');
    fx.server.enqueue({ kind: 'reply', text: 'done' });
    await runTurn(fx.hostFor(replay));
    const result = lastOf(replay, 'tool_result');
    expect(result?.isError).toBe(true);
    expect(result?.content).toMatch(/conflict: .*already patched: src\/limit\.go.*nothing was written/);
    expect(file('src/server.go')).toBe('package main\n\nfunc main() {}\n');
    expect(file('README.md')).toBe('# demo\n');
  });

  it('a tool_call_started from before per-file images still parses', () => {
    const old = ToolCallStarted.parse({
      seq: 4,
      at: '2026-01-01T00:00:00.000Z',
      kind: 'tool_call_started',
      toolCallId: 'e1',
      tool: 'edit_file',
      idempotencyKey: 'ev3-edit_file',
      preImageHash: 'a'.repeat(64),
      postImageHash: 'b'.repeat(64),
    });
    expect(old.files).toBeUndefined();
  });
});
