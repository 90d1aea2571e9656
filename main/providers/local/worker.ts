/*
 * The model process: loads one GGUF with node-llama-cpp and answers generate requests over the parent channel.
 * The same script runs as a Node child process (`process.send`) and as an Electron utility process
 * (`process.parentPort`). It never builds or downloads llama.cpp: the prebuilt binaries npm installed, or a
 * named failure.
 *
 * One LlamaContextSequence (with its LlamaChat) is kept per session key, so a session's next request re-evaluates
 * only the tokens after the longest prefix it shares with what the sequence holds.
 */
import os from 'node:os';
import {
  getLlama,
  LlamaChat,
  LlamaLogLevel,
  type ChatHistoryItem,
  type ChatModelFunctions,
  type ChatWrapper,
  type Llama,
  type LlamaContext,
  type LlamaContextSequence,
  type LlamaModel,
} from 'node-llama-cpp';
import { FromWorker, ToWorker, type GenerateRequest, type LocalModelSettings } from './protocol.js';

type ParentPort = {
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
};

/** The parent channel: Electron's parentPort in a utility process, else Node's IPC channel. */
function channel(): {
  send: (message: FromWorker) => void;
  listen: (handler: (message: unknown) => void) => void;
} {
  const port = (process as unknown as { parentPort?: ParentPort }).parentPort;
  if (port) {
    return {
      send: (message) => port.postMessage(FromWorker.parse(message)),
      listen: (handler) => port.on('message', (event) => handler(event.data)),
    };
  }
  if (!process.send)
    throw new Error('the local model worker needs a parent channel (fork it with an IPC channel)');
  return {
    send: (message) => process.send?.(FromWorker.parse(message)),
    listen: (handler) => process.on('message', handler),
  };
}

type Slot = {
  key: string;
  sequence: LlamaContextSequence;
  chat: LlamaChat;
  /** The calls' text as the model wrote it, by Keel's call id: re-rendered verbatim, the prefix stays the same. */
  raw: Map<string, unknown>;
  lastUsed: number;
};

const { send: sendNow, listen } = channel();

/**
 * Streamed text and reasoning go out at most every CHUNK_MS, a window's chunks as one message: each message wakes
 * both processes and is checked on both sides, which at hundreds of tokens a second cost most of the generation
 * time (test/bench `local`). The first chunk of a window goes at once, so the first token is never held back.
 */
const CHUNK_MS = 8;
let pendingChunk: { type: 'text' | 'reasoning'; id: number; text: string } | undefined;
let chunkWindow: NodeJS.Timeout | undefined;

function flushChunk(): void {
  if (pendingChunk) sendNow(pendingChunk);
  pendingChunk = undefined;
}

function endChunkWindow(): void {
  flushChunk();
  chunkWindow = undefined;
}

function sendChunk(type: 'text' | 'reasoning', id: number, text: string): void {
  if (pendingChunk && (pendingChunk.type !== type || pendingChunk.id !== id)) flushChunk();
  if (!chunkWindow) {
    chunkWindow = setTimeout(endChunkWindow, CHUNK_MS);
    sendNow({ type, id, text });
    return;
  }
  if (pendingChunk) pendingChunk.text += text;
  else pendingChunk = { type, id, text };
}

/** Every other message: what is pending streams first, so the host sees everything in order. */
function send(message: FromWorker): void {
  flushChunk();
  sendNow(message);
}
let llama: Llama | undefined;
let model: LlamaModel | undefined;
let context: LlamaContext | undefined;
/**
 * The model's chat wrapper, resolved once at load: resolving it (rendering the GGUF's Jinja template against every
 * specialised wrapper to find an equivalent) took ~600 ms per new LlamaChat, paid by each new session's first
 * request.
 */
let chatWrapper: ChatWrapper | undefined;
const slots: Slot[] = [];
const running = new Map<number, AbortController>();
let queue: Promise<void> = Promise.resolve();

async function load(settings: LocalModelSettings): Promise<void> {
  try {
    llama = await getLlama({
      gpu: settings.gpu ? 'auto' : false,
      build: 'never',
      logLevel: LlamaLogLevel.error,
      progressLogs: false,
    });
    model = await llama.loadModel({ modelPath: settings.path });
    const sequences = settings.sequences ?? 2;
    context = await model.createContext({
      sequences,
      contextSize: settings.contextSize ?? { max: model.trainContextSize },
      ...(settings.threads ? { threads: settings.threads } : {}),
    });
    // The first slot, free for the first session; its chat resolves the template's wrapper for every slot.
    const sequence = context.getSequence();
    const chat = new LlamaChat({ contextSequence: sequence });
    chatWrapper = chat.chatWrapper;
    slots.push({ key: '', sequence, chat, raw: new Map(), lastUsed: 0 });
    send({
      type: 'loaded',
      contextSize: context.contextSize,
      trainContextSize: model.trainContextSize,
      gpu: llama.gpu,
      chatWrapper: chat.chatWrapper.wrapperName ?? 'unknown',
    });
  } catch (error) {
    send({ type: 'load_failed', message: error instanceof Error ? error.message : String(error) });
  }
}

/** The GPU backend llama.cpp would pick here (prebuilt binaries only, as `load`), its devices and memory. */
async function detect(): Promise<void> {
  const ramBytes = os.totalmem();
  try {
    const found =
      llama ??
      (await getLlama({ gpu: 'auto', build: 'never', logLevel: LlamaLogLevel.error, progressLogs: false }));
    const vram = found.gpu === false ? undefined : await found.getVramState();
    send({
      type: 'machine',
      machine: {
        gpu: found.gpu,
        gpuNames: found.gpu === false ? [] : await found.getGpuDeviceNames(),
        vramBytes: vram?.total ?? 0,
        vramFreeBytes: vram?.free ?? 0,
        unifiedBytes: vram?.unifiedSize ?? 0,
        ramBytes,
      },
    });
  } catch (error) {
    const problem = error instanceof Error ? error.message : String(error);
    send({
      type: 'machine',
      machine: {
        gpu: false,
        gpuNames: [],
        vramBytes: 0,
        vramFreeBytes: 0,
        unifiedBytes: 0,
        ramBytes,
        problem,
      },
    });
  }
}

/** The session's slot, else a free one, else the least recently used (its cache is dropped). */
function slotFor(key: string): Slot {
  const kept = slots.find((slot) => slot.key === key);
  if (kept) return kept;
  if (context && context.sequencesLeft > 0) {
    const sequence = context.getSequence();
    const slot: Slot = {
      key,
      sequence,
      chat: new LlamaChat({ contextSequence: sequence, chatWrapper: chatWrapper ?? 'auto' }),
      raw: new Map(),
      lastUsed: 0,
    };
    slots.push(slot);
    return slot;
  }
  const oldest = slots.reduce((a, b) => (a.lastUsed <= b.lastUsed ? a : b));
  oldest.key = key;
  oldest.raw = new Map();
  return oldest;
}

/**
 * The fewest prompt tokens a reused sequence evaluates on a CPU with flash attention. llama.cpp's CPU
 * flash-attention kernel gains from batching only from 64 query tokens on: below that each token costs about what a
 * generated one does against the whole cache, so the 30-60 new tokens of a tool result took longer than 64 would.
 * Measured here (test/bench `local`, tiny model, 4,000 tokens cached, one thread): 54 new tokens 250-440 ms, 64
 * tokens 13-35 ms; the same with head size 128 (as most models have): 50 tokens ~97 ms, 64 ~20 ms. Without flash
 * attention small batches are fast but a long cold prompt is 1.5-2.5x slower, so it stays on (llama.cpp's choice).
 */
const MIN_CPU_BATCH = 64;

/**
 * When a reused sequence would evaluate fewer than MIN_CPU_BATCH new tokens, forgets the kept tail's last few so
 * LlamaChat evaluates that many: the request's tokens are rendered as LlamaChat renders them (the same wrapper,
 * history and functions) and compared with what the sequence holds. A wrong guess costs time, never correctness:
 * LlamaChat itself evaluates whatever differs.
 */
async function widenSmallBatch(
  slot: Slot,
  history: ChatHistoryItem[],
  functions: ChatModelFunctions | undefined,
): Promise<void> {
  const held = slot.sequence.nextTokenIndex;
  if (!model || !context || llama?.gpu !== false || context.flashAttention === false || held === 0) return;
  const chatHistory: ChatHistoryItem[] =
    history.at(-1)?.type === 'model' ? history : [...history, { type: 'model', response: [] }];
  const tokens = slot.chat.chatWrapper
    .generateContextState({ chatHistory, ...(functions ? { availableFunctions: functions } : {}) })
    .contextText.tokenize(model.tokenizer);
  const { firstDifferentIndex } = slot.sequence.compareContextTokens(tokens);
  if (firstDifferentIndex === 0 || tokens.length - firstDifferentIndex >= MIN_CPU_BATCH) return;
  const start = Math.max(0, tokens.length - MIN_CPU_BATCH);
  if (start < held) await slot.sequence.eraseContextTokenRanges([{ start, end: held }]);
}

const STOP_REASONS: Record<string, string> = {
  functionCalls: 'tool_use',
  eogToken: 'end_turn',
  stopGenerationTrigger: 'end_turn',
  customStopTrigger: 'end_turn',
  maxTokens: 'max_tokens',
  abort: 'aborted',
};

async function generate(request: GenerateRequest, controller: AbortController): Promise<void> {
  const { id } = request;
  if (!context) throw new Error('the model is not loaded');
  const slot = slotFor(request.key);
  slot.lastUsed = Date.now();
  const history = request.history.map((item): ChatHistoryItem => {
    if (item.type !== 'model') return item;
    return {
      type: 'model',
      response: item.response.map((part) => {
        if (typeof part === 'string') return part;
        const raw = part.id === undefined ? undefined : slot.raw.get(part.id);
        return {
          type: 'functionCall',
          name: part.name,
          params: part.params,
          result: part.result,
          ...(raw !== undefined ? { rawCall: raw as never } : {}),
        };
      }),
    };
  });
  const functions = request.functions as ChatModelFunctions;
  const hasFunctions = Object.keys(functions).length > 0;
  const started = performance.now();
  await widenSmallBatch(slot, history, hasFunctions ? functions : undefined);
  const before = slot.sequence.tokenMeter.getState();
  let firstTokenMs: number | undefined;
  const first = (): void => {
    firstTokenMs ??= performance.now() - started;
  };
  const announced = new Set<number>();
  const result = await slot.chat.generateResponse(history, {
    signal: controller.signal,
    stopOnAbortSignal: true,
    ...(request.maxTokens ? { maxTokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    onResponseChunk: (chunk) => {
      first();
      if (chunk.text === '') return;
      if (chunk.type === undefined) sendChunk('text', id, chunk.text);
      else if (chunk.segmentType === 'thought') sendChunk('reasoning', id, chunk.text);
    },
    ...(hasFunctions
      ? {
          functions,
          onFunctionCallParamsChunk: (chunk: {
            callIndex: number;
            functionName: string;
            paramsChunk: string;
          }) => {
            first();
            if (!announced.has(chunk.callIndex)) {
              announced.add(chunk.callIndex);
              send({ type: 'call', id, index: chunk.callIndex, name: chunk.functionName });
            }
            if (chunk.paramsChunk)
              send({ type: 'arguments', id, index: chunk.callIndex, text: chunk.paramsChunk });
          },
        }
      : {}),
  });
  const used = slot.sequence.tokenMeter.diff(before);
  const calls = (result.functionCalls ?? []).map((call, index) => {
    const callId = request.callIds[index] ?? `local_${id}_${index}`;
    slot.raw.set(callId, call.raw);
    return { id: callId, name: call.functionName, arguments: JSON.stringify(call.params ?? {}) };
  });
  const held = slot.sequence.contextTokens.length;
  send({
    type: 'done',
    id,
    text: result.response,
    reasoning: result.fullResponse
      .map((part) => (typeof part !== 'string' && part.segmentType === 'thought' ? part.text : ''))
      .join(''),
    calls,
    stopReason: STOP_REASONS[result.metadata.stopReason] ?? result.metadata.stopReason,
    stats: {
      evaluatedTokens: used.usedInputTokens,
      reusedTokens: Math.max(0, held - used.usedInputTokens - used.usedOutputTokens),
      outputTokens: used.usedOutputTokens,
      ...(firstTokenMs !== undefined ? { firstTokenMs } : {}),
      totalMs: performance.now() - started,
    },
  });
}

listen((raw) => {
  const parsed = ToWorker.safeParse(raw);
  if (!parsed.success) {
    // A request the worker cannot read is answered, never left waiting.
    const { type, id } = (raw ?? {}) as { type?: unknown; id?: unknown };
    const problem = `an unreadable request: ${parsed.error.message}`;
    if (type === 'load') send({ type: 'load_failed', message: problem });
    else if (typeof id === 'number') send({ type: 'failed', id, message: problem });
    return;
  }
  const message = parsed.data;
  if (message.type === 'abort') {
    running.get(message.id)?.abort();
    return;
  }
  if (message.type === 'load') {
    queue = queue.then(() => load(message.settings));
    return;
  }
  if (message.type === 'detect') {
    queue = queue.then(detect);
    return;
  }
  const controller = new AbortController();
  running.set(message.id, controller);
  // One generation at a time: a context's sequences share its threads, and a turn is sequential anyway.
  queue = queue.then(async () => {
    try {
      if (!controller.signal.aborted) await generate(message, controller);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      send({ type: 'failed', id: message.id, message: text, tooLong: /context size|too long/i.test(text) });
    } finally {
      running.delete(message.id);
    }
  });
});

// The parent went away (app quit, CLI killed): nothing is left to answer.
process.on('disconnect', () => process.exit(0));
