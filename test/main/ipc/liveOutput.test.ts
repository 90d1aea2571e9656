import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../../main/sandbox/box.js';
import { startFixture, type IpcFixture } from './support.js';

const sandbox = await detectSandbox();
const boxed = sandbox.kind !== 'none';

let f: IpcFixture;

beforeEach(async () => {
  f = await startFixture('keel-ipc-live-');
});

afterEach(async () => {
  await f.close();
});

/** The text a terminal pushed so far. */
function terminalText(terminalId: string): string {
  return f.pushes
    .flatMap((push) =>
      push.topic === 'terminal.data' && push.payload.terminalId === terminalId ? [push.payload.chunk] : [],
    )
    .join('');
}

const runCommand = (command: string) => ({
  kind: 'reply' as const,
  toolCalls: [{ name: 'run_command', arguments: { command } }],
});

describe.skipIf(!boxed)('interactive terminals', () => {
  it('opens a shell in the box, runs what is typed, and kill ends it with its tree', async () => {
    // In the folder itself: what the shell writes lands there at once (checkout shells are tested below).
    const session = await f.newSession({ checkout: 'direct' });
    const opened = await f.call('terminal.open', { sessionId: session.id, cols: 100, rows: 30 }, 'window-1');
    expect(opened).toEqual({ terminalId: expect.any(String) as string, cwd: '.', sandbox: sandbox.kind });
    const { terminalId } = opened;
    await f.call('terminal.write', {
      terminalId,
      data: 'echo $((6 * 7)) > answer.txt; echo sum=$((40 + 2))\r',
    });
    await f.waitForPush('terminal.data', () => terminalText(terminalId).includes('sum=42'));
    expect(fs.readFileSync(`${f.project}/answer.txt`, 'utf8')).toBe('42\n');
    // Outside the workspace the box is read-only.
    await f.call('terminal.write', {
      terminalId,
      data: 'touch /usr/keel-probe 2>/dev/null || echo refused=yes\r',
    });
    await f.waitForPush('terminal.data', () => terminalText(terminalId).includes('refused=yes'));
    await f.call('terminal.ack', { terminalId, chars: terminalText(terminalId).length });
    await f.call('terminal.resize', { terminalId, cols: 80, rows: 24 });

    expect(await f.call('terminal.list', {}, 'window-1')).toEqual({
      terminals: [{ terminalId, sessionId: session.id, openedAt: expect.any(String) as string, mine: true }],
    });
    expect((await f.call('terminal.list', { sessionId: session.id }, 'window-2')).terminals[0]?.mine).toBe(
      false,
    );

    await f.call('terminal.write', { terminalId, data: 'sleep 300 &\r' });
    expect(await f.call('terminal.kill', { terminalId })).toEqual({
      exitCode: null,
      signal: 'SIGKILL',
      killed: true,
    });
    expect(await f.waitForPush('terminal.exit', (p) => p.terminalId === terminalId)).toMatchObject({
      sessionId: session.id,
      killed: true,
    });
    expect((await f.call('terminal.list')).terminals).toEqual([]);
    expect((await f.fail('terminal.write', { terminalId, data: 'x' })).code).toBe('not_found');
  });

  it("closes a connection's terminals when it disconnects, a session's when it is deleted, and all on close", async () => {
    const a = await f.newSession();
    const b = await f.newSession();
    const first = await f.call('terminal.open', { sessionId: a.id }, 'tab-1');
    const second = await f.call('terminal.open', { sessionId: b.id }, 'tab-2');
    const third = await f.call('terminal.open', { sessionId: a.id }, 'tab-2');

    await f.handlers.disconnect('tab-1');
    expect((await f.call('terminal.list')).terminals.map((t) => t.terminalId).sort()).toEqual(
      [second.terminalId, third.terminalId].sort(),
    );
    await f.call('sessions.delete', { sessionId: a.id, confirm: a.id });
    expect((await f.call('terminal.list')).terminals.map((t) => t.terminalId)).toEqual([second.terminalId]);
    await f.handlers.close();
    const exits = f.pushes.flatMap((p) => (p.topic === 'terminal.exit' ? [p.payload.terminalId] : []));
    expect(exits.sort()).toEqual([first.terminalId, second.terminalId, third.terminalId].sort());
    expect((await f.handlers.invoke('terminal.list', {})).ok).toBe(false);
  });

  it('opens the shell in the project checkout of a checkout session', async () => {
    fs.writeFileSync(`${f.project}/main.go`, 'package main\n');
    const session = await f.newSession({ checkout: 'manual' });
    const { terminalId, cwd } = await f.call('terminal.open', { sessionId: session.id });
    // Shown relative to the project, the root of the session's tools.
    expect(cwd).toBe('.');
    await f.call('terminal.write', { terminalId, data: 'echo extra > added.txt && cat main.go\r' });
    await f.waitForPush('terminal.data', () => terminalText(terminalId).includes('package main'));
    await f.call('terminal.kill', { terminalId });
    // What the user made in the checkout is a change to review, not yet in the project folder.
    const review = await f.call('persistent.diff', { sessionId: session.id });
    expect(review.dirs[0]?.files).toEqual([{ path: 'added.txt', change: 'added' }]);
    expect(fs.existsSync(`${f.project}/added.txt`)).toBe(false);
  });

  it('keeps a file made in the shell of an auto session: the next turn commits it, as the review says', async () => {
    const session = await f.newSession({ policy: 'full-auto' });
    const { terminalId } = await f.call('terminal.open', { sessionId: session.id });
    await f.call('terminal.write', {
      terminalId,
      data: 'echo mine > from-shell.txt && echo made=$((0+1))\r',
    });
    await f.waitForPush('terminal.data', () => terminalText(terminalId).includes('made=1'));
    await f.call('terminal.kill', { terminalId });
    const review = await f.call('persistent.diff', { sessionId: session.id });
    expect(review.dirs).toMatchObject([
      { dir: 'project', commit: 'auto', onNewTurn: 'commit', files: [{ path: 'from-shell.txt' }] },
    ]);
    expect(review.newTurnWarning).toBeNull();
    f.server.enqueue({ kind: 'reply', text: 'ok' });
    const { turnId } = await f.call('turns.send', { sessionId: session.id, prompt: 'hello' });
    await f.turnEnded(session.id, turnId);
    expect(fs.readFileSync(`${f.project}/from-shell.txt`, 'utf8')).toBe('mine\n');
  });
});

describe.skipIf(!boxed)('running commands', () => {
  it("keeps a flooding command's output bounded by a slow acking watcher, and every line arrives", async () => {
    const session = await f.newSession({ policy: 'full-auto' });
    await f.call('tool.watch', { sessionId: session.id }, 'viewer');
    const lines = 150_000;
    f.server.enqueue(runCommand(`seq 1 ${lines}`), { kind: 'reply', text: 'counted' });

    let delivered = 0;
    let acked = 0;
    let maxOutstanding = 0;
    let text = '';
    let toolCallId: string | undefined;
    const off = f.handlers.hub.subscribe((push) => {
      if (push.topic !== 'tool.output' || push.payload.sessionId !== session.id) return;
      toolCallId = push.payload.toolCallId;
      delivered += push.payload.chunk.length;
      text += push.payload.chunk;
      maxOutstanding = Math.max(maxOutstanding, delivered - acked);
    });
    // A slow renderer: at most 8,000 characters every 20 ms (400,000 a second).
    const slow = setInterval(() => {
      const chars = Math.min(8_000, delivered - acked);
      if (chars <= 0 || toolCallId === undefined) return;
      acked += chars;
      void f.handlers.invoke('tool.outputAck', { sessionId: session.id, toolCallId, chars }, 'viewer');
    }, 20);
    try {
      const { turnId } = await f.call('turns.send', { sessionId: session.id, prompt: 'count' });
      expect((await f.turnEnded(session.id, turnId)).outcome).toEqual({ status: 'completed' });
    } finally {
      clearInterval(slow);
      off();
    }
    const total = Array.from({ length: lines }, (_, n) => n + 1).join('\r\n').length;
    expect(delivered).toBeGreaterThanOrEqual(total);
    // The watermark (100,000) plus what one pty read and the redactor's hold-back add.
    expect(maxOutstanding).toBeLessThan(100_000 + 64 * 1024);
    const numbers = text.split(/\r?\n/).filter((line) => line !== '');
    expect(numbers.length).toBe(lines);
    expect(numbers.at(-1)).toBe(String(lines));
    expect(numbers.every((line, index) => line === String(index + 1))).toBe(true);
  });

  it('kills a running command from the UI; the turn goes on with its killed result', async () => {
    const session = await f.newSession({ policy: 'full-auto' });
    f.server.enqueue(runCommand('echo started; sleep 60; echo never'), {
      kind: 'reply',
      text: 'it was stopped',
    });
    const { turnId } = await f.call('turns.send', { sessionId: session.id, prompt: 'wait a minute' });
    const output = await f.waitForPush(
      'tool.output',
      (p) => p.sessionId === session.id && p.chunk.includes('started'),
    );
    const started = Date.now();
    expect(await f.call('commands.kill', { sessionId: session.id, toolCallId: output.toolCallId })).toEqual({
      killed: true,
    });
    expect((await f.turnEnded(session.id, turnId)).outcome).toEqual({ status: 'completed' });
    expect(Date.now() - started).toBeLessThan(10_000);
    const events = f.eventsOf(session.id);
    const result = events.find((event) => event.kind === 'tool_result');
    expect(result).toMatchObject({ toolCallId: output.toolCallId, isError: true, signal: 'SIGKILL' });
    expect(result?.kind === 'tool_result' && result.content).toMatch(/stopped by the user/);
    expect(result?.kind === 'tool_result' && result.content).not.toMatch(/never/);
    expect(events.at(-1)).toMatchObject({ kind: 'assistant_message', content: 'it was stopped' });

    expect(await f.fail('commands.kill', { sessionId: session.id, toolCallId: output.toolCallId })).toEqual({
      code: 'invalid_state',
      message: `command ${output.toolCallId} has already finished`,
    });
    expect((await f.fail('commands.kill', { sessionId: session.id, toolCallId: 'call_nope' })).code).toBe(
      'not_found',
    );
  });

  it('replays a finished run from its artifact, in pages that never cut a character', async () => {
    const session = await f.newSession({ policy: 'full-auto' });
    f.server.enqueue(runCommand("for i in $(seq 1 3000); do printf 'é€'; done; echo"), {
      kind: 'reply',
      text: 'printed',
    });
    const { turnId } = await f.call('turns.send', { sessionId: session.id, prompt: 'print' });
    await f.turnEnded(session.id, turnId);
    const result = f.eventsOf(session.id).find((event) => event.kind === 'tool_result');
    const handle = result?.kind === 'tool_result' ? result.artifact : undefined;
    if (!handle) throw new Error('no artifact');
    let offset = 0;
    let text = '';
    let pages = 0;
    for (;;) {
      const page = await f.call('artifacts.read', { sessionId: session.id, handle, offset, maxBytes: 4097 });
      text += page.text;
      pages += 1;
      offset = page.nextOffset;
      if (page.eof) break;
    }
    expect(pages).toBeGreaterThan(3);
    expect(text).toBe(`${'é€'.repeat(3000)}\r\n`);
    expect((await f.fail('artifacts.read', { sessionId: session.id, handle: '../events.sqlite' })).code).toBe(
      'not_found',
    );
  });
});
