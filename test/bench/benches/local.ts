import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { getLlama, LlamaChat, LlamaLogLevel, type ChatHistoryItem } from 'node-llama-cpp';
import type { Payload } from '../../../main/common/payload.js';
import { stopLocalModels } from '../../../main/providers/index.js';
import { LocalProvider } from '../../../main/providers/local/provider.js';
import { ensureLibraryBuilt, REPO_ROOT } from '../../support/cli.js';
import { writeTinyModel } from '../../support/tinyModel.js';
import { makeMetric, median, round } from '../harness.js';
import type { Bench } from './context.js';

/** Issue 34: tokens per second through Keel at least this share of node-llama-cpp's own. */
export const LOCAL_SPEED_TARGET = 0.95;
/** Issue 34: the second request of a turn, with its prefix reused, reaches its first token in this share or less. */
export const LOCAL_TTFT_TARGET = 0.2;

/** Tokens each speed run generates (the tiny model never stops on its own: `"a"a"a…`). */
const GENERATED = 400;
/** The first request's user text: one token per character in the tiny model's vocabulary. */
const PROMPT_CHARS = 4_000;

const WORKER = path.join(REPO_ROOT, 'dist', 'main', 'providers', 'local', 'worker.js');

/**
 * Issue 34, on the test suite's tiny GGUF (test/support/tinyModel.ts) and this machine, one thread each:
 * - generation speed: tokens per second from the first token to the last, through Keel's `local` provider (the
 *   model in its own process, every chunk crossing the process channel and the provider's stream) against
 *   node-llama-cpp alone in this process (the same model file, context size and LlamaChat), runs interleaved;
 * - time to first token of a turn's second request (the first request's prompt and reply, then a tool-result-like
 *   user message): on the session's kept sequence (prefix reused: only the new tokens are evaluated) against the
 *   same request under a new key (everything evaluated again).
 */
export const localBench: Bench = {
  name: 'local',
  title:
    'Local model (tiny GGUF): tokens/s through Keel vs node-llama-cpp alone; second-request TTFT with reuse',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    await ensureLibraryBuilt(path.join(REPO_ROOT, 'main', 'providers', 'local', 'worker.ts'));
    const modelPath = path.join(scratch.dir('local'), 'tiny.gguf');
    writeTinyModel(modelPath, { contextLength: 8192 });
    const runs = Math.max(1, Math.round(sizes.cliStartRuns / 3));
    const settings = { path: modelPath, threads: 1, contextSize: 8192, sequences: 4 };
    const provider = new LocalProvider(settings, { script: WORKER });

    const llama = await getLlama({
      gpu: false,
      build: 'never',
      logLevel: LlamaLogLevel.error,
      progressLogs: false,
    });
    const model = await llama.loadModel({ modelPath });
    const context = await model.createContext({ contextSize: 8192, sequences: 1, threads: 1 });
    const chat = new LlamaChat({ contextSequence: context.getSequence() });

    const keelSpeed: number[] = [];
    const aloneSpeed: number[] = [];
    const withReuse: number[] = [];
    const withoutReuse: number[] = [];
    const evaluatedReused: number[] = [];
    const evaluatedCold: number[] = [];
    try {
      for (let run = 0; run < runs; run += 1) {
        const prompt = `Run ${run}: say something.`;
        keelSpeed.push(await keelTokensPerSecond(provider, prompt, `speed-${run}`));
        aloneSpeed.push(await aloneTokensPerSecond(chat, prompt));
        progress(`local: speed run ${run + 1}/${runs}`);
      }
      for (let run = 0; run < runs; run += 1) {
        const first: Payload = {
          messages: [
            { role: 'system', content: 'You are a coding agent.' },
            {
              role: 'user',
              content: `${run} ${'Read the notes and summarise them. '.repeat(PROMPT_CHARS / 35)}`,
            },
          ],
        };
        const key = `turn-${run}`;
        const reply = await collectText(provider, first, key, 8);
        const second: Payload = {
          messages: [
            ...first.messages,
            { role: 'assistant', content: reply },
            { role: 'user', content: 'The notes say: remember the milk.' },
          ],
        };
        withReuse.push(await firstTokenMs(provider, second, key));
        evaluatedReused.push(provider.lastStats?.evaluatedTokens ?? NaN);
        withoutReuse.push(await firstTokenMs(provider, second, `${key}-cold`));
        evaluatedCold.push(provider.lastStats?.evaluatedTokens ?? NaN);
        progress(`local: first-token run ${run + 1}/${runs}`);
      }
    } finally {
      stopLocalModels();
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    }
    const keel = round(median(keelSpeed), 1);
    const alone = round(median(aloneSpeed), 1);
    const reused = round(median(withReuse), 1);
    const cold = round(median(withoutReuse), 1);
    return {
      name: this.name,
      title: this.title,
      params: { runs, generated: GENERATED, promptChars: PROMPT_CHARS, threads: 1 },
      metrics: [
        makeMetric('generation through Keel, tokens per second (median)', 'tok/s', 'higher', { keel }),
        makeMetric('generation by node-llama-cpp alone, tokens per second (median)', 'tok/s', 'higher', {
          keel: alone,
        }),
        makeMetric('generation speed, Keel / node-llama-cpp alone', 'x', 'higher', {
          keel: alone > 0 ? round(keel / alone, 3) : null,
        }),
        makeMetric("second request's time to first token, prefix reused (median)", 'ms', 'lower', {
          keel: reused,
        }),
        makeMetric("second request's time to first token, not reused (median)", 'ms', 'lower', {
          keel: cold,
        }),
        makeMetric("second request's prompt tokens evaluated, prefix reused (median)", 'tokens', 'lower', {
          keel: median(evaluatedReused),
        }),
        makeMetric("second request's prompt tokens evaluated, not reused (median)", 'tokens', 'lower', {
          keel: median(evaluatedCold),
        }),
        makeMetric("second request's time to first token, reused / not reused", 'x', 'lower', {
          keel: cold > 0 ? round(reused / cold, 3) : null,
        }),
      ],
      notes: [
        `${GENERATED} tokens per speed run, timed from the first token to the last on the side that reads them (Keel: the provider's stream in this process; alone: LlamaChat's onTextChunk). Runs interleaved; medians of ${runs}.`,
        `The turn's first request carries ~${PROMPT_CHARS} prompt tokens; the second adds the reply and one short message. Not reused: the same request under a new key (a fresh sequence).`,
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};

/** Streams a request through Keel's provider; the text, and when the first and last text chunks came. */
async function stream(
  provider: LocalProvider,
  payload: Payload,
  key: string,
  maxOutputTokens: number,
): Promise<{ text: string; startedAt: number; firstAt: number; lastAt: number; outputTokens: number }> {
  const startedAt = performance.now();
  let firstAt = 0;
  let lastAt = 0;
  let text = '';
  for await (const event of provider.stream({
    payload,
    tools: [],
    model: 'keel-tiny',
    maxOutputTokens,
    cacheKey: key,
  })) {
    if (event.type === 'text') {
      if (firstAt === 0) firstAt = performance.now();
      lastAt = performance.now();
      text += event.text;
    }
  }
  return { text, startedAt, firstAt, lastAt, outputTokens: provider.lastStats?.outputTokens ?? 0 };
}

async function keelTokensPerSecond(provider: LocalProvider, prompt: string, key: string): Promise<number> {
  const payload: Payload = { messages: [{ role: 'user', content: prompt }] };
  const run = await stream(provider, payload, key, GENERATED);
  // The first token's own time is the prompt's, not generation: count the tokens after it.
  return ((run.outputTokens - 1) * 1000) / Math.max(1e-6, run.lastAt - run.firstAt);
}

async function aloneTokensPerSecond(chat: LlamaChat, prompt: string): Promise<number> {
  const history: ChatHistoryItem[] = [
    { type: 'user', text: prompt },
    { type: 'model', response: [] },
  ];
  let firstAt = 0;
  let lastAt = 0;
  const meter = chat.sequence.tokenMeter;
  const before = meter.usedOutputTokens;
  await chat.generateResponse(history, {
    maxTokens: GENERATED,
    onTextChunk: () => {
      const now = performance.now();
      if (firstAt === 0) firstAt = now;
      lastAt = now;
    },
  });
  const tokens = meter.usedOutputTokens - before;
  return ((tokens - 1) * 1000) / Math.max(1e-6, lastAt - firstAt);
}

async function collectText(
  provider: LocalProvider,
  payload: Payload,
  key: string,
  tokens: number,
): Promise<string> {
  return (await stream(provider, payload, key, tokens)).text;
}

async function firstTokenMs(provider: LocalProvider, payload: Payload, key: string): Promise<number> {
  const run = await stream(provider, payload, key, 2);
  return run.firstAt - run.startedAt;
}
