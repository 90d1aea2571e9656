import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Payload } from '../../../main/common/payload.js';
import { sha256File } from '../../../main/providers/local/host.js';
import { LocalProvider } from '../../../main/providers/local/provider.js';
import {
  ProviderError,
  stopLocalModels,
  type StreamEvent,
  type StreamRequest,
} from '../../../main/providers/index.js';
import { ensureLibraryBuilt, REPO_ROOT } from '../../support/cli.js';
import { TINY_ANSWER, writeTinyModel } from '../../support/tinyModel.js';

/*
 * The local provider through its real child process (the CLI's path): the worker script compiled to dist/, the
 * tiny GGUF of test/support/tinyModel.ts, node-llama-cpp's prebuilt CPU binaries.
 */
let dir: string;
let modelPath: string;
let provider: LocalProvider;
const WORKER = join(REPO_ROOT, 'dist', 'main', 'providers', 'local', 'worker.js');
// One thread: llama.cpp's threads spin at each barrier, which on a busy 2-core machine costs 20x.
const settings = (): { path: string; threads: number; contextSize: number } => ({
  path: modelPath,
  threads: 1,
  contextSize: 4096,
});

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-local-'));
  modelPath = join(dir, 'tiny.gguf');
  writeTinyModel(modelPath);
  await ensureLibraryBuilt(join(REPO_ROOT, 'main', 'providers', 'local', 'worker.ts'));
  provider = new LocalProvider(settings(), { script: WORKER });
}, 180_000);

afterAll(() => {
  stopLocalModels();
  rmSync(dir, { recursive: true, force: true });
});

const readFile = {
  name: 'read_file',
  description: 'Read a file of the project',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string', description: 'relative path', pattern: '^[^/]' } },
    required: ['path'],
    additionalProperties: false,
  },
};

const firstRequest = (): Payload => ({
  messages: [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'What is in notes.txt?' },
  ],
});

async function collect(request: StreamRequest): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of provider.stream(request)) events.push(event);
  return events;
}

function done(events: StreamEvent[]) {
  const last = events.at(-1);
  if (last?.type !== 'done') throw new Error(`no done event: ${JSON.stringify(events)}`);
  return last.message;
}

describe('local provider (child process)', () => {
  it('streams text with usage from the runtime and stops at the output limit', async () => {
    const events = await collect({
      payload: firstRequest(),
      tools: [],
      model: 'tiny',
      maxOutputTokens: 6,
      cacheKey: 'text',
    });
    const texts = events.filter((e) => e.type === 'text');
    expect(texts.length).toBeGreaterThan(1);
    const message = done(events);
    expect(message.content).toBe(texts.map((e) => (e.type === 'text' ? e.text : '')).join(''));
    expect(message.content).toMatch(/^\|\|call: "a/);
    expect(message.stopReason).toBe('max_tokens');
    expect(message.usage?.outputTokens).toBeGreaterThanOrEqual(5);
    expect(message.usage?.inputTokens).toBeGreaterThan(10);
  });

  it('makes a grammar-valid tool call, then answers after its result evaluating only the new tokens', async () => {
    const first = await collect({
      payload: firstRequest(),
      tools: [readFile],
      model: 'tiny',
      cacheKey: 'session-a',
    });
    const call = done(first).toolCalls[0];
    expect(done(first).stopReason).toBe('tool_use');
    expect(call?.name).toBe('read_file');
    expect(typeof (JSON.parse(call?.arguments ?? '') as { path?: unknown }).path).toBe('string');
    // The streamed call carries the id the completed message gives it.
    expect(first.find((e) => e.type === 'tool_call')).toMatchObject({ id: call?.id, name: 'read_file' });
    const firstStats = provider.lastStats!;

    const continued: Payload = {
      messages: [
        ...firstRequest().messages,
        { role: 'assistant', content: done(first).content, toolCalls: done(first).toolCalls },
        { role: 'tool', toolCallId: call!.id, content: 'error: notes.txt does not exist' },
      ],
    };
    const second = await collect({
      payload: continued,
      tools: [readFile],
      model: 'tiny',
      cacheKey: 'session-a',
    });
    expect(done(second).content).toBe(TINY_ANSWER);
    expect(done(second).stopReason).toBe('end_turn');
    const reused = provider.lastStats!;
    // The first request's prompt and the call it wrote are reused; evaluated are the result (~35 tokens: one per
    // character for this tokenizer, with the template's markers) and the few tokens the runtime generated after
    // the call's closing brace and dropped, widened on a CPU to one 64-token batch by re-evaluating the kept
    // tail's last few (llama.cpp's CPU flash attention is slower on fewer: worker.ts MIN_CPU_BATCH).
    expect(reused.evaluatedTokens).toBeLessThanOrEqual(64);
    expect(reused.reusedTokens).toBeGreaterThanOrEqual(firstStats.evaluatedTokens - 64);
    expect(reused.reusedTokens + reused.evaluatedTokens).toBeGreaterThan(firstStats.evaluatedTokens + 30);
    expect(done(second).usage).toMatchObject({
      inputTokens: reused.evaluatedTokens,
      cacheReadTokens: reused.reusedTokens,
    });

    // The same request on another session's sequence (which shares only the system prompt's start) evaluates the
    // whole prompt again.
    await collect({ payload: continued, tools: [readFile], model: 'tiny', cacheKey: 'session-b' });
    const cold = provider.lastStats!;
    expect(cold.evaluatedTokens).toBeGreaterThan(firstStats.evaluatedTokens * 0.9);
    expect(reused.evaluatedTokens).toBeLessThan(cold.evaluatedTokens / 5);
  });

  it('stops generating at once when the signal aborts', async () => {
    const controller = new AbortController();
    let partial = '';
    const stream = provider.stream({
      payload: firstRequest(),
      tools: [],
      model: 'tiny',
      maxOutputTokens: 1_000_000,
      signal: controller.signal,
      cacheKey: 'abort',
    });
    const error = await (async () => {
      try {
        for await (const event of stream) {
          if (event.type === 'text') partial += event.text;
          if (partial.length > 12) controller.abort();
        }
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('aborted');
    expect((error as ProviderError).partial).toBe(partial);
    // The worker serves one generation at a time: this answer comes only if the aborted one really stopped
    // (a million tokens would outlast the test).
    const after = await collect({
      payload: firstRequest(),
      tools: [],
      model: 'tiny',
      maxOutputTokens: 3,
      cacheKey: 'abort',
    });
    expect(done(after).stopReason).toBe('max_tokens');
  });

  it('turns a crash of the model process mid-stream into a retryable error, and the next request runs', async () => {
    const controller = new AbortController();
    let crashedPid: number | undefined;
    let caught: unknown;
    try {
      for await (const event of provider.stream({
        payload: firstRequest(),
        tools: [],
        model: 'tiny',
        maxOutputTokens: 1_000_000,
        signal: controller.signal,
        cacheKey: 'crash',
      })) {
        if (event.type === 'text' && crashedPid === undefined) {
          crashedPid = provider.pid;
          process.kill(crashedPid!, 'SIGKILL');
        }
      }
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(ProviderError);
    expect((caught as ProviderError).code).toBe('server');
    expect((caught as ProviderError).retryable).toBe(true);
    expect((caught as ProviderError).message).toMatch(/local model process stopped \(killed by SIGKILL/);
    const after = await collect({
      payload: firstRequest(),
      tools: [],
      model: 'tiny',
      maxOutputTokens: 3,
      cacheKey: 'crash',
    });
    expect(done(after).stopReason).toBe('max_tokens');
    expect(provider.pid).not.toBe(crashedPid);
  });

  it('refuses a file whose hash is not the pinned one', async () => {
    const actual = await sha256File(modelPath);
    const wrong = new LocalProvider(
      { ...settings(), sha256: actual.replace(/^./, actual[0] === 'a' ? 'b' : 'a') },
      { script: WORKER },
    );
    const events: StreamEvent[] = [];
    const failure = await (async () => {
      try {
        for await (const event of wrong.stream({ payload: firstRequest(), tools: [], model: 'tiny' }))
          events.push(event);
      } catch (e) {
        return e as ProviderError;
      }
      return undefined;
    })();
    expect(failure?.message).toMatch(/changed since this session was pinned/);
    expect(events).toEqual([]);
  });
});
