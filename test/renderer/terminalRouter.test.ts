import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EventOf } from '../../main/common/events.js';

// Renderer modules are compiled by tsconfig.web.json, not the Node project these tests type-check in: they are
// loaded at run time and described here by the shapes these tests rely on.
type Sink = (chunk: string, rendered: () => void) => void;
type OutputRouter = {
  watching: boolean;
  push(toolCallId: string, chunk: string): void;
  attach(toolCallId: string, sink: Sink): { backlog: string; truncated: boolean; detach: () => void };
  hasOutput(toolCallId: string): boolean;
  flush(): void;
  dispose(): void;
};
type RouterModule = {
  OutputRouter: new (sendAck: (toolCallId: string, chars: number) => void) => OutputRouter;
  AckBatcher: new (send: (chars: number) => void) => {
    add(chars: number): void;
    flush(): void;
    dispose(): void;
  };
};
type RunFacts = {
  status: 'requested' | 'awaiting_approval' | 'denied' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  result?: EventOf<'tool_result'>;
};
type StatusModule = {
  runStatusOf: (
    run: RunFacts,
    sessionRunning: boolean,
  ) => { state: string; label: string; durationMs?: number };
  commandOf: (argumentsText: string) => string;
  excerptOf: (content: string) => { text: string; notes: string[] };
};
const routerPath = '../../renderer/src/screens/terminal/outputRouter.js';
const statusPath = '../../renderer/src/screens/terminal/runStatus.js';
const { OutputRouter, AckBatcher } = (await import(/* @vite-ignore */ routerPath)) as RouterModule;
const { runStatusOf, commandOf, excerptOf } = (await import(/* @vite-ignore */ statusPath)) as StatusModule;

describe('live command output routing', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('acks a chunk only once the terminal has rendered it, in batches', () => {
    const acks: [string, number][] = [];
    const router = new OutputRouter((id, chars) => acks.push([id, chars]));
    router.watching = true;
    const pending: (() => void)[] = [];
    router.attach('call_1', (_chunk, rendered) => pending.push(rendered));
    router.push('call_1', 'a'.repeat(3000));
    router.push('call_1', 'b'.repeat(3000));
    vi.advanceTimersByTime(100);
    expect(acks).toEqual([]);
    for (const rendered of pending.splice(0)) rendered();
    vi.advanceTimersByTime(20);
    expect(acks).toEqual([['call_1', 6000]]);
    // Past 8,192 pending characters the ack goes out at once.
    router.push('call_1', 'c'.repeat(9000));
    pending.shift()?.();
    expect(acks).toEqual([
      ['call_1', 6000],
      ['call_1', 9000],
    ]);
  });

  it('acks output nobody shows at once (while watching) and keeps it for a terminal opened later', () => {
    const acks: [string, number][] = [];
    const router = new OutputRouter((id, chars) => acks.push([id, chars]));
    router.push('call_2', 'before watch\r\n');
    router.watching = true;
    router.push('call_2', 'line 2\r\n');
    router.flush();
    expect(acks).toEqual([['call_2', 8]]);
    expect(router.hasOutput('call_2')).toBe(true);
    const seen: string[] = [];
    const attached = router.attach('call_2', (chunk, rendered) => {
      seen.push(chunk);
      rendered();
    });
    expect(attached).toMatchObject({ backlog: 'before watch\r\nline 2\r\n', truncated: false });
    router.push('call_2', 'live');
    expect(seen).toEqual(['live']);
    attached.detach();
    router.push('call_2', 'after');
    expect(seen).toEqual(['live']);
  });

  it("keeps only a run's tail, says so, and forgets the oldest runs", () => {
    const router = new OutputRouter(() => undefined);
    for (let i = 0; i < 40; i++) router.push('big', `${String(i).padStart(2, '0')}${'x'.repeat(16_382)}`);
    const { backlog, truncated } = router.attach('big', () => undefined);
    expect(truncated).toBe(true);
    expect(backlog.length).toBeLessThanOrEqual(256 * 1024);
    expect(backlog.endsWith('x'.repeat(100))).toBe(true);
    expect(backlog.startsWith('24')).toBe(true);
    for (let run = 0; run < 9; run++) router.push(`run_${run}`, 'x');
    expect(router.hasOutput('big')).toBe(false);
    expect(router.hasOutput('run_8')).toBe(true);
  });

  it('sends nothing once disposed', () => {
    const sent: number[] = [];
    const batcher = new AckBatcher((chars) => sent.push(chars));
    batcher.add(100);
    batcher.dispose();
    vi.advanceTimersByTime(100);
    batcher.add(0);
    batcher.flush();
    expect(sent).toEqual([]);
  });
});

describe("a command run's status", () => {
  const result = (fields: Partial<EventOf<'tool_result'>>): EventOf<'tool_result'> => ({
    seq: 9,
    at: '2025-01-01T00:00:00.000Z',
    kind: 'tool_result',
    toolCallId: 'call_1',
    content: 'out\n[exit code 0, 12 ms]\n[full output: artifact ev3-run_command.log, 4 bytes]',
    ...fields,
  });

  it('tells how a run ended from its exit status and the runner notes', () => {
    expect(
      runStatusOf({ status: 'succeeded', result: result({ exitCode: 0, durationMs: 12 }) }, false),
    ).toMatchObject({
      state: 'succeeded',
      label: 'Exit 0',
      durationMs: 12,
    });
    expect(
      runStatusOf({ status: 'failed', result: result({ exitCode: 2, isError: true }) }, false).label,
    ).toBe('Exit 2');
    expect(
      runStatusOf(
        {
          status: 'failed',
          result: result({
            signal: 'SIGKILL',
            content: 'x\n[timed out after 120000 ms; the command and its children were killed]',
          }),
        },
        false,
      ),
    ).toMatchObject({ state: 'timed_out', label: 'Timed out after 120000 ms: killed' });
    expect(
      runStatusOf(
        {
          status: 'failed',
          result: result({
            exitCode: 137,
            content: '[killed for exceeding the 4096 MB memory cap after 80 ms]',
          }),
        },
        false,
      ),
    ).toMatchObject({ state: 'memory', label: 'Killed: over the 4096 MB memory cap' });
    expect(
      runStatusOf(
        {
          status: 'failed',
          result: result({
            signal: 'SIGKILL',
            content: '[stopped by the user after 5 ms; the command and its children were killed]',
          }),
        },
        false,
      ).state,
    ).toBe('stopped');
    expect(
      runStatusOf({ status: 'failed', result: result({ signal: 'SIGTERM', content: 'x' }) }, false).label,
    ).toBe('Killed by SIGTERM');
  });

  it('is running only while its turn runs; otherwise its outcome is unknown', () => {
    expect(runStatusOf({ status: 'running' }, true).state).toBe('running');
    expect(runStatusOf({ status: 'running' }, false).state).toBe('unknown');
    expect(runStatusOf({ status: 'awaiting_approval' }, true).label).toBe('Awaiting approval');
    expect(runStatusOf({ status: 'denied' }, true).state).toBe('cancelled');
  });

  it('reads the command and the replayable excerpt', () => {
    expect(commandOf('{"command":"npm test","timeout_ms":5}')).toBe('npm test');
    expect(commandOf('{"comm')).toBe('{"comm');
    expect(excerptOf('a\nb\n[exit code 0, 3 ms]\n[full output: artifact x.log, 4 bytes]')).toEqual({
      text: 'a\nb',
      notes: ['[exit code 0, 3 ms]', '[full output: artifact x.log, 4 bytes]'],
    });
  });
});
