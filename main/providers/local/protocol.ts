import { z } from 'zod';

/*
 * The one channel between Keel and its model process (a child process in the CLI, an Electron utility process in
 * the app). Every message is checked on arrival: the worker is our code, but a crashed or confused process must
 * become a named error, not a half-read object.
 */

/** How the model is loaded: the file, and the settings a session pins with it. */
export const LocalModelSettings = z.object({
  path: z.string().min(1),
  /** The file's SHA-256 as pinned: checked before the model loads. */
  sha256: z.string().optional(),
  /** Tokens of context to allocate; absent, the largest that the model allows and the machine's memory fits. */
  contextSize: z.number().int().positive().optional(),
  /** CPU threads for evaluation; absent, llama.cpp's choice (the machine's performance cores). */
  threads: z.number().int().positive().optional(),
  /** Use the GPU backend llama.cpp finds (Metal, CUDA, Vulkan); false: CPU only. */
  gpu: z.boolean().optional(),
  /** Sequences (sessions whose KV cache is kept at once); default 2. */
  sequences: z.number().int().positive().max(16).optional(),
});
export type LocalModelSettings = z.infer<typeof LocalModelSettings>;

const GbnfSchema = z.record(z.string(), z.unknown());

/** node-llama-cpp's chat history item, as plain JSON. */
export const HistoryItem = z.discriminatedUnion('type', [
  z.object({ type: z.literal('system'), text: z.string() }),
  z.object({ type: z.literal('user'), text: z.string() }),
  z.object({
    type: z.literal('model'),
    response: z.array(
      z.union([
        z.string(),
        z.object({
          type: z.literal('functionCall'),
          /** Keel's id of the call: the worker finds the call's raw text by it. */
          id: z.string().optional(),
          name: z.string(),
          params: z.unknown(),
          result: z.unknown(),
          /** The call as the model wrote it (kept by the worker), so the prefix re-renders byte for byte. */
          rawCall: z.unknown().optional(),
          startsNewChunk: z.boolean().optional(),
        }),
      ]),
    ),
  }),
]);
export type HistoryItem = z.infer<typeof HistoryItem>;

export const GenerateRequest = z.object({
  type: z.literal('generate'),
  id: z.number().int(),
  /** Which kept sequence (KV cache) serves this request: the session. */
  key: z.string().min(1),
  history: z.array(HistoryItem),
  functions: z.record(
    z.string(),
    z.object({ description: z.string().optional(), params: GbnfSchema.optional() }),
  ),
  /** Ids for the calls this request may produce, in order, so host and worker agree without a round trip. */
  callIds: z.array(z.string()),
  maxTokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).optional(),
});
export type GenerateRequest = z.infer<typeof GenerateRequest>;

export const ToWorker = z.discriminatedUnion('type', [
  z.object({ type: z.literal('load'), settings: LocalModelSettings }),
  GenerateRequest,
  z.object({ type: z.literal('abort'), id: z.number().int() }),
  /** What this machine offers a model: its GPU backend and memory (answered by `machine`). */
  z.object({ type: z.literal('detect') }),
]);
export type ToWorker = z.infer<typeof ToWorker>;

/** What a request cost, from the runtime's own counters. */
export const GenerationStats = z.object({
  /** Prompt tokens evaluated for this request (not found in the kept KV cache). */
  evaluatedTokens: z.number().int().nonnegative(),
  /** Prompt tokens found in the kept KV cache and not evaluated again. */
  reusedTokens: z.number().int().nonnegative(),
  /** Tokens generated. */
  outputTokens: z.number().int().nonnegative(),
  /** From the first prompt token to the first generated token, and for the whole request. */
  firstTokenMs: z.number().nonnegative().optional(),
  totalMs: z.number().nonnegative(),
});
export type GenerationStats = z.infer<typeof GenerationStats>;

/** The machine as llama.cpp sees it: the GPU backend it would use (false: CPU only), its devices and memory. */
export const LocalMachine = z.object({
  gpu: z.union([z.string(), z.literal(false)]),
  gpuNames: z.array(z.string()),
  /** VRAM in bytes (0 without a GPU); `unifiedBytes` > 0 when it is shared with the CPU (Apple silicon). */
  vramBytes: z.number().nonnegative(),
  vramFreeBytes: z.number().nonnegative(),
  unifiedBytes: z.number().nonnegative(),
  ramBytes: z.number().nonnegative(),
  /** Why no GPU was looked at (the runtime would not load), when that happened. */
  problem: z.string().optional(),
});
export type LocalMachine = z.infer<typeof LocalMachine>;

export const FromWorker = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('loaded'),
    contextSize: z.number().int().positive(),
    trainContextSize: z.number().int().positive(),
    gpu: z.union([z.string(), z.literal(false)]),
    chatWrapper: z.string(),
  }),
  z.object({ type: z.literal('load_failed'), message: z.string() }),
  z.object({ type: z.literal('machine'), machine: LocalMachine }),
  z.object({ type: z.literal('text'), id: z.number().int(), text: z.string() }),
  z.object({ type: z.literal('reasoning'), id: z.number().int(), text: z.string() }),
  z.object({ type: z.literal('call'), id: z.number().int(), index: z.number().int(), name: z.string() }),
  z.object({ type: z.literal('arguments'), id: z.number().int(), index: z.number().int(), text: z.string() }),
  z.object({
    type: z.literal('done'),
    id: z.number().int(),
    text: z.string(),
    reasoning: z.string(),
    calls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })),
    stopReason: z.string(),
    stats: GenerationStats,
  }),
  z.object({
    type: z.literal('failed'),
    id: z.number().int(),
    message: z.string(),
    tooLong: z.boolean().optional(),
  }),
]);
export type FromWorker = z.infer<typeof FromWorker>;
