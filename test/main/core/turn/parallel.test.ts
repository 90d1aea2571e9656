import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import type { Policy, SessionEvent } from '../../../../main/common/events.js';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { runTurn, type TurnHost } from '../../../../main/core/turn/engine.js';
import { PARALLEL_CALLS } from '../../../../main/core/turn/parallel.js';
import { errorOutcome } from '../../../../main/tools/outcome.js';
import { previewSubject } from '../../../../main/tools/preview.js';
import { createToolRegistry, toToolDefinition, type ToolRegistry } from '../../../../main/tools/registry.js';
import type { ToolModule } from '../../../../main/tools/types.js';
import { rejected } from '../../../support/sessionFixture.js';
import { useTurnHostFixture } from '../../../support/turnHost.js';

const fx = useTurnHostFixture('keel-parallel-', {
  prepare: ({ project }) => {
    mkdirSync(path.join(project, 'src'), { recursive: true });
    writeFileSync(path.join(project, 'src', 'a.js'), 'export const a = 1;\n');
    writeFileSync(path.join(project, 'src', 'b.js'), 'export const b = 2; // limiter\n');
  },
});

/**
 * A read-only tool whose calls meet each other: `{name, waitFor?}` finishes only once the call named
 * `waitFor` has finished (or, with `waitFor: "stop"`, once the turn is stopped). Run one after another,
 * a call waiting for a later one could never finish: it gives up after 10 s and says so, which fails the
 * test. So concurrency is proven by what happened, with no timing threshold on success.
 */
class Rendezvous {
  readonly started: string[] = [];
  readonly finished: string[] = [];
  running = 0;
  maxRunning = 0;
  private readonly waiters = new Map<string, (() => void)[]>();
  onStart?: (name: string) => void;

  readonly tool: ToolModule = {
    name: 'meet',
    description: 'Finishes once another call has finished.',
    parameters: z.strictObject({ name: z.string(), waitFor: z.string().optional() }),
    mode: 'read-only',
    kind: 'read',
    preview: () => previewSubject(),
    resume: { rule: 'rerun' },
    execute: async (raw, ctx) => {
      const args = raw as { name: string; waitFor?: string };
      this.started.push(args.name);
      this.running++;
      this.maxRunning = Math.max(this.maxRunning, this.running);
      this.onStart?.(args.name);
      try {
        if (args.waitFor !== undefined) {
          const met = await this.meet(args.waitFor, ctx.signal);
          if (!met) return errorOutcome(`${args.name} waited for ${args.waitFor}, which never finished`);
        }
        return { content: `${args.name} done`, isError: false };
      } finally {
        this.running--;
        this.finished.push(args.name);
        for (const wake of this.waiters.get(args.name) ?? []) wake();
      }
    },
  };

  private meet(name: string, signal: AbortSignal | undefined): Promise<boolean> {
    if (this.finished.includes(name) || (name === 'stop' && signal?.aborted)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), 10_000);
      const done = (met: boolean) => {
        clearTimeout(timer);
        resolve(met);
      };
      if (name === 'stop') signal?.addEventListener('abort', () => done(true), { once: true });
      else this.waiters.set(name, [...(this.waiters.get(name) ?? []), () => done(true)]);
    });
  }
}

/** The session mode's real tools plus the rendezvous tool. */
function registryWith(extra: ToolModule, mode: 'read-only' | 'write' = 'write'): ToolRegistry {
  const base = createToolRegistry(mode);
  const byName = new Map<string, ToolModule>([
    ...base.names().map((name) => [name, base.get(name) as ToolModule] as const),
    [extra.name, extra],
  ]);
  return {
    mode,
    get: (name) => byName.get(name),
    names: () => [...byName.keys()],
    definitions: () => [...byName.values()].map(toToolDefinition),
  };
}

const session = (policy: Policy): SessionLog => fx.createSession({ policy, toolMode: 'write' });

const hostFor = (log: SessionLog, meet: Rendezvous, extra: Partial<TurnHost> = {}): TurnHost =>
  fx.hostFor(log, { registry: registryWith(meet.tool), ...extra });

const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, arguments: args });
const meetCall = (name: string, waitFor?: string) =>
  call(name, 'meet', waitFor === undefined ? { name } : { name, waitFor });

/** `S:id` for tool_call_started, `R:id` for tool_result, `ask:id`, `grant`, `int` (interrupted), in log order. */
function trail(events: readonly SessionEvent[]): string[] {
  const out: string[] = [];
  for (const event of events) {
    if (event.kind === 'tool_call_started') out.push(`S:${event.toolCallId}`);
    else if (event.kind === 'tool_result') out.push(`R:${event.toolCallId}`);
    else if (event.kind === 'approval_request') out.push(`ask:${event.toolCallId}`);
    else if (event.kind === 'interrupted') out.push('int');
  }
  return out;
}

type Body = { messages: { role: string; content: string | null; tool_call_id?: string }[] };
const toolMessages = (i: number) =>
  (fx.server.requests[i]?.body as Body).messages
    .filter((m) => m.role === 'tool')
    .map((m) => ({ id: m.tool_call_id, content: m.content }));

describe('reads of one assistant message', () => {
  it('run concurrently, and their results are appended and sent in call order', async () => {
    const meet = new Rendezvous();
    const log = session('ask');
    // a can only finish after c has finished: one after another, a would wait for c forever.
    fx.server.enqueue(
      { kind: 'reply', toolCalls: [meetCall('a', 'c'), meetCall('b'), meetCall('c', 'b')] },
      { kind: 'reply', text: 'All three.' },
    );
    const outcome = await runTurn(hostFor(log, meet), { prompt: 'look around' });
    expect(outcome).toEqual({ status: 'completed', text: 'All three.' });
    expect(meet.started).toEqual(['a', 'b', 'c']);
    expect(meet.finished).toEqual(['b', 'c', 'a']);
    expect(meet.maxRunning).toBeGreaterThanOrEqual(2);
    expect(trail(log.read())).toEqual(['S:a', 'S:b', 'S:c', 'R:a', 'R:b', 'R:c']);
    expect(toolMessages(1)).toEqual([
      { id: 'a', content: 'a done' },
      { id: 'b', content: 'b done' },
      { id: 'c', content: 'c done' },
    ]);
    expect(rejected(fx.server)).toEqual([]);
    const stages = log.readTrace().filter((entry) => entry.stage === 'tool:meet');
    expect(stages.map((entry) => (entry.detail as { parallel: number }).parallel)).toEqual([3, 3, 3]);
  });

  it('with the real read tools: read_file, grep and list_dir answer in call order', async () => {
    const meet = new Rendezvous();
    const log = session('ask');
    fx.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          call('r1', 'read_file', { path: 'src/a.js' }),
          call('g1', 'grep', { pattern: 'limiter' }),
          call('l1', 'list_dir', { path: 'src' }),
        ],
      },
      { kind: 'reply', text: 'ok' },
    );
    await runTurn(hostFor(log, meet), { prompt: 'read' });
    expect(trail(log.read())).toEqual(['S:r1', 'S:g1', 'S:l1', 'R:r1', 'R:g1', 'R:l1']);
    const [read, grep, list] = toolMessages(1);
    expect([read?.id, grep?.id, list?.id]).toEqual(['r1', 'g1', 'l1']);
    expect(read?.content).toContain('export const a = 1;');
    expect(grep?.content).toContain('src/b.js');
    expect(list?.content).toMatch(/a\.js[\s\S]*b\.js/);
    const keys = log.read().flatMap((e) => (e.kind === 'tool_call_started' ? [e.idempotencyKey] : []));
    expect(keys).toEqual(['ev3-read_file', 'ev3-grep', 'ev3-list_dir']);
    expect(rejected(fx.server)).toEqual([]);
  });

  it(`run at most ${PARALLEL_CALLS} at once, and a stop ends them promptly with a valid log`, async () => {
    const meet = new Rendezvous();
    const log = session('ask');
    const names = Array.from({ length: PARALLEL_CALLS + 2 }, (_, i) => `m${i}`);
    fx.server.enqueue({ kind: 'reply', toolCalls: names.map((name) => meetCall(name, 'stop')) });
    const controller = new AbortController();
    // Every call waits for the stop: the stop comes when the last call that may run at once has started.
    meet.onStart = () => meet.running === PARALLEL_CALLS && controller.abort();
    const outcome = await runTurn(hostFor(log, meet, { signal: controller.signal }), { prompt: 'go' });
    expect(outcome.status).toBe('interrupted');
    expect(meet.started).toEqual(names.slice(0, PARALLEL_CALLS));
    expect(meet.maxRunning).toBe(PARALLEL_CALLS);
    const running = names.slice(0, PARALLEL_CALLS);
    // The two never started get a cancelled result before the turn ends (issue 20: the log says what
    // happened to every call).
    expect(trail(log.read())).toEqual([
      ...running.map((name) => `S:${name}`),
      ...running.map((name) => `R:${name}`),
      ...names.slice(PARALLEL_CALLS).map((name) => `R:${name}`),
      'int',
    ]);
    // The next turn's request pairs every call: the two never started answer as cancelled.
    fx.server.enqueue({ kind: 'reply', text: 'continuing' });
    expect(await runTurn(hostFor(log, meet), { prompt: 'go on' })).toEqual({
      status: 'completed',
      text: 'continuing',
    });
    expect(toolMessages(1).map((m) => m.id)).toEqual(names);
    expect(
      toolMessages(1)
        .slice(-2)
        .map((m) => m.content),
    ).toEqual(['{"error":"cancelled_by_user"}', '{"error":"cancelled_by_user"}']);
    expect(rejected(fx.server)).toEqual([]);
  });

  it('a write between reads ends the parallel run: it waits for its approval, the read after it waits too', async () => {
    const meet = new Rendezvous();
    const log = session('ask');
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [
        meetCall('a', 'b'),
        meetCall('b'),
        call('w', 'write_file', { path: 'src/new.js', content: 'export const fresh = true;\n' }),
        call('r', 'read_file', { path: 'src/new.js' }),
        call('g', 'grep', { pattern: 'fresh' }),
      ],
    });
    const first = await runTurn(hostFor(log, meet), { prompt: 'add a file' });
    expect(first.status).toBe('awaiting_approval');
    expect(trail(log.read())).toEqual(['S:a', 'S:b', 'R:a', 'R:b', 'ask:w']);

    const request = log.read().find((e) => e.kind === 'approval_request') as SessionEvent;
    log.append({ kind: 'approval_granted', requestSeq: request.seq, scope: 'once' });
    fx.server.enqueue({ kind: 'reply', text: 'Added.' });
    expect(await runTurn(hostFor(log, meet))).toEqual({ status: 'completed', text: 'Added.' });
    // The write ran before the reads after it started, so they see the new file.
    expect(trail(log.read())).toEqual([
      'S:a',
      'S:b',
      'R:a',
      'R:b',
      'ask:w',
      'S:w',
      'R:w',
      'S:r',
      'S:g',
      'R:r',
      'R:g',
    ]);
    const messages = toolMessages(1);
    expect(messages.map((m) => m.id)).toEqual(['a', 'b', 'w', 'r', 'g']);
    expect(messages[3]?.content).toContain('export const fresh = true;');
    expect(messages[4]?.content).toContain('src/new.js');
    expect(rejected(fx.server)).toEqual([]);
  });

  it('in full-auto a write still runs alone, after the reads before it and before the reads after it', async () => {
    const meet = new Rendezvous();
    const log = session('full-auto');
    fx.server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          call('r0', 'read_file', { path: 'src/a.js' }),
          call('w', 'write_file', { path: 'src/a.js', content: 'export const a = 2;\n' }),
          call('r1', 'read_file', { path: 'src/a.js' }),
          meetCall('x', 'y'),
          meetCall('y'),
        ],
      },
      { kind: 'reply', text: 'done' },
    );
    await runTurn(hostFor(log, meet), { prompt: 'bump a' });
    expect(trail(log.read())).toEqual([
      'S:r0',
      'R:r0',
      'S:w',
      'R:w',
      'S:r1',
      'S:x',
      'S:y',
      'R:r1',
      'R:x',
      'R:y',
    ]);
    const messages = toolMessages(1);
    expect(messages[0]?.content).toContain('export const a = 1;');
    expect(messages[2]?.content).toContain('export const a = 2;');
    expect(messages.slice(3).map((m) => m.content)).toEqual(['x done', 'y done']);
    expect(rejected(fx.server)).toEqual([]);
  });

  it('a crash between the results of a parallel run: resume re-runs the unanswered reads once, in order', async () => {
    const meet = new Rendezvous();
    const log = session('ask');
    // What a kill -9 after the first result leaves: every call started, one answered.
    log.append({ kind: 'user_message', content: 'look' });
    const assistant = log.append({
      kind: 'assistant_message',
      content: '',
      toolCalls: ['a', 'b', 'c'].map((name) => ({
        id: name,
        name: 'meet',
        arguments: JSON.stringify({ name }),
      })),
    });
    const seq = assistant.ok ? (assistant.events[0]?.seq ?? 0) : 0;
    for (const name of ['a', 'b', 'c'])
      log.append({
        kind: 'tool_call_started',
        toolCallId: name,
        tool: 'meet',
        idempotencyKey: `ev${seq}-meet.x`,
      });
    log.append({ kind: 'tool_result', toolCallId: 'a', tool: 'meet', content: 'a done' });
    fx.server.enqueue({ kind: 'reply', text: 'resumed' });
    expect(await runTurn(hostFor(log, meet))).toEqual({ status: 'completed', text: 'resumed' });
    // Started calls are settled one by one by their resume rule (rerun); a is not run again.
    expect(meet.started).toEqual(['b', 'c']);
    expect(trail(log.read())).toEqual(['S:a', 'S:b', 'S:c', 'R:a', 'R:b', 'R:c']);
    expect(toolMessages(0).map((m) => m.id)).toEqual(['a', 'b', 'c']);
    expect(rejected(fx.server)).toEqual([]);
  });
});
