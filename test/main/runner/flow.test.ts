import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createFlowControl,
  HIGH_WATERMARK_CHARS,
  LOW_WATERMARK_CHARS,
  type FlowControl,
} from '../../../main/runner/flow.js';
import { runningCommand } from '../../../main/runner/boxedCommand.js';
import type { SandboxInfo } from '../../../main/sandbox/box.js';
import { boxedSandbox, createArea, run, waitFor, type RunnerArea } from './runnerFixtures.js';

let area: RunnerArea;
let sandbox: SandboxInfo;

beforeAll(async () => {
  area = createArea();
  sandbox = await boxedSandbox();
  expect(sandbox.kind, sandbox.reason).toBe('bwrap');
});
afterAll(() => area.cleanup());

/**
 * What may already be in flight when the flow pauses the pty: one read of node-pty's stream (at most its
 * 64 KiB high-water mark; seen here: up to ~12 KB). Without flow control the 2.4 M-character flood below
 * queues far more than this at the slow consumer.
 */
const ONE_PTY_READ = 65_536;

describe('createFlowControl', () => {
  it('pauses its producers past the high watermark and resumes them under the low one', () => {
    const calls: string[] = [];
    const flow = createFlowControl({ highWatermarkChars: 100, lowWatermarkChars: 10 });
    flow.bind({ pause: () => calls.push('pause'), resume: () => calls.push('resume') });
    flow.deliver('x'.repeat(100));
    expect(flow.paused).toBe(false);
    flow.deliver('x');
    expect(flow.paused).toBe(true);
    flow.ack(80);
    expect(flow.paused).toBe(true);
    flow.ack(12);
    expect(flow.unackedChars).toBe(9);
    expect(flow.paused).toBe(false);
    expect(calls).toEqual(['pause', 'resume']);
    expect(flow.stats).toEqual({ deliveredChars: 101, maxUnackedChars: 101, pauses: 1 });
  });

  it('ignores acks beyond what was delivered and nonsense acks', () => {
    const flow = createFlowControl({ highWatermarkChars: 100, lowWatermarkChars: 10 });
    flow.deliver('abc');
    flow.ack(1_000);
    flow.ack(Number.NaN);
    flow.ack(-5);
    expect(flow.unackedChars).toBe(0);
    flow.deliver('x'.repeat(101));
    expect(flow.paused).toBe(true);
  });

  it('pauses a producer bound while the flow is behind, and resumes it when unbound', () => {
    const flow = createFlowControl({ highWatermarkChars: 10, lowWatermarkChars: 5 });
    flow.deliver('x'.repeat(20));
    const calls: string[] = [];
    const unbind = flow.bind({ pause: () => calls.push('pause'), resume: () => calls.push('resume') });
    unbind();
    unbind();
    expect(calls).toEqual(['pause', 'resume']);
  });

  it('release lets a producer run free for good once the consumer is gone', () => {
    const calls: string[] = [];
    const delivered: string[] = [];
    const flow = createFlowControl({
      highWatermarkChars: 10,
      lowWatermarkChars: 5,
      onData: (chunk) => delivered.push(chunk),
    });
    flow.bind({ pause: () => calls.push('pause'), resume: () => calls.push('resume') });
    flow.deliver('x'.repeat(20));
    flow.release();
    flow.deliver('y'.repeat(50));
    expect(calls).toEqual(['pause', 'resume']);
    expect(flow.paused).toBe(false);
    expect(delivered.join('')).toBe('x'.repeat(20) + 'y'.repeat(50));
  });

  it('refuses watermarks that cannot work', () => {
    expect(() => createFlowControl({ highWatermarkChars: 10, lowWatermarkChars: 10 })).toThrow(
      /lowWatermarkChars < highWatermarkChars/,
    );
    expect(HIGH_WATERMARK_CHARS).toBe(100_000);
    expect(LOW_WATERMARK_CHARS).toBe(5_000);
  });
});

/**
 * A consumer that renders (acks) at most `perTick` characters every millisecond or so, and starts only once
 * `holdUntil` characters wait: the flow must then pause the producer at least once, however slowly the producer
 * runs on a busy machine. `fills` counts the times the queue rose to the high watermark after it had fallen
 * below the low one (the producer resumed): each of them must have paused the producer.
 */
function slowConsumer(perTick: number, holdUntil = 0) {
  const queue: string[] = [];
  const rendered: string[] = [];
  let maxQueued = 0;
  let maxChunk = 0;
  let queued = 0;
  let flow: FlowControl | undefined;
  let stopped = false;
  let fills = 0;
  let resumed = true;
  const onData = (chunk: string): void => {
    queue.push(chunk);
    maxChunk = Math.max(maxChunk, chunk.length);
    queued += chunk.length;
    maxQueued = Math.max(maxQueued, queued);
    if (resumed && queued >= HIGH_WATERMARK_CHARS) {
      fills += 1;
      resumed = false;
    }
  };
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
  const loop = async (): Promise<void> => {
    while (!stopped && queued < holdUntil) await tick();
    while (!stopped || queue.length > 0) {
      let budget = perTick;
      while (budget > 0 && queue.length > 0) {
        const chunk = queue.shift() as string;
        rendered.push(chunk);
        queued -= chunk.length;
        budget -= chunk.length;
        flow?.ack(chunk.length);
        if (queued < LOW_WATERMARK_CHARS) resumed = true;
      }
      await tick();
    }
  };
  return {
    onData,
    attach: (f: FlowControl) => (flow = f),
    start: loop,
    stop: () => (stopped = true),
    rendered: () => rendered.join(''),
    maxQueued: () => maxQueued,
    maxChunk: () => maxChunk,
    fills: () => fills,
  };
}

const FLOOD =
  'awk \'BEGIN { for (i = 1; i <= 100000; i++) printf "line %06d é€😀 naïve\\n", i }\'; echo FLOOD-DONE';

function expectedFlood(): string {
  const lines: string[] = [];
  for (let i = 1; i <= 100_000; i++) lines.push(`line ${String(i).padStart(6, '0')} é€😀 naïve\r\n`);
  return `${lines.join('')}FLOOD-DONE\r\n`;
}

describe('runCommand with flow control', () => {
  it('a 100,000-line flood to a slow consumer: the pty is paused, buffering stays bounded, output whole and in order', async () => {
    const consumer = slowConsumer(1_500, HIGH_WATERMARK_CHARS);
    const flow = createFlowControl({ onData: consumer.onData });
    consumer.attach(flow);
    const rendering = consumer.start();
    const started = Date.now();
    const result = await run(area, sandbox, FLOOD, { flow, timeoutMs: 60_000 });
    consumer.stop();
    await rendering;
    const text = consumer.rendered();
    expect(result.exitCode).toBe(0);
    expect(text).not.toContain('\uFFFD');
    expect(text).toBe(expectedFlood());
    // Every time the buffer filled after a resume the pty was paused (the first fill is certain: the consumer
    // waits for it). How many fills there are follows how much faster the producer runs than the consumer.
    expect(consumer.fills()).toBeGreaterThan(0);
    expect(flow.stats.pauses).toBeGreaterThanOrEqual(consumer.fills());
    expect(flow.stats.maxUnackedChars).toBeLessThanOrEqual(HIGH_WATERMARK_CHARS + ONE_PTY_READ);
    expect(consumer.maxQueued()).toBeLessThanOrEqual(HIGH_WATERMARK_CHARS + ONE_PTY_READ);
    expect(flow.unackedChars).toBe(0);
    console.info(
      `flood: ${text.length} chars in ${Date.now() - started} ms, ${flow.stats.pauses} pauses, ${consumer.fills()} fills, ` +
        `max unacked ${flow.stats.maxUnackedChars}, largest chunk ${consumer.maxChunk()}`,
    );
  }, 60_000);

  it('a consumer that never acks holds the command; release() lets it finish', async () => {
    const flow = createFlowControl({ highWatermarkChars: 20_000, lowWatermarkChars: 1_000 });
    let delivered = 0;
    const pending = run(area, sandbox, "yes 'holding on' | head -n 50000; echo HELD-DONE", {
      flow,
      onData: (chunk) => (delivered += chunk.length),
      timeoutMs: 30_000,
    });
    expect(await waitFor(() => flow.paused, 10_000)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const whilePaused = delivered;
    expect(whilePaused).toBeLessThanOrEqual(20_000 + ONE_PTY_READ);
    flow.release();
    const result = await pending;
    expect(result.exitCode).toBe(0);
    expect(result.bytes).toBe('holding on\r\n'.length * 50_000 + 'HELD-DONE\r\n'.length);
    expect(delivered).toBe(result.bytes);
  }, 30_000);

  it("runningCommand(artifact) finds a run: attachFlow controls it mid-run, abort() is the UI's Kill", async () => {
    const artifactPath = path.join(area.artifacts, 'killed-by-ui.log');
    const pending = run(area, sandbox, 'echo started; sleep 1; yes flooding-now', { artifactPath });
    expect(await waitFor(() => runningCommand(artifactPath) !== undefined, 5_000)).toBe(true);
    const handle = runningCommand(artifactPath);
    const flow = createFlowControl({ highWatermarkChars: 10_000, lowWatermarkChars: 1_000 });
    handle?.attachFlow(flow);
    expect(await waitFor(() => flow.paused, 10_000)).toBe(true);
    const started = Date.now();
    handle?.abort();
    const result = await pending;
    expect(result.aborted).toBe(true);
    expect(result.signal).toBe('SIGKILL');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(runningCommand(artifactPath)).toBeUndefined();
  }, 30_000);
});
