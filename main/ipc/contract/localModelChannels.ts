import { z } from 'zod';

/*
 * Issue 34: local models for the app (first run's "Use a local model"): the same catalogue, machine detection and
 * pulls as `keel models local` (core harness/localModels.ts). A pull runs in the background: `models.localPull`
 * returns at once and the `models.localProgress` topic says how far it is and how it ended.
 */

const catalogueId = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[a-z0-9][a-z0-9.-]*$/, 'a catalogue id such as qwen2.5-coder-3b');

export const LocalModelView = z.object({
  id: z.string(),
  name: z.string(),
  /** The catalogue's size (the download reports the real one). */
  approxBytes: z.number().nonnegative(),
  minMemoryGb: z.number().int().positive(),
  license: z.string(),
  fileName: z.string(),
  downloaded: z.boolean(),
});

const Machine = z.object({
  gpu: z.union([z.string(), z.literal(false)]),
  gpuNames: z.array(z.string()),
  vramBytes: z.number().nonnegative(),
  unifiedBytes: z.number().nonnegative(),
  ramBytes: z.number().nonnegative(),
  problem: z.string().optional(),
});

export const localModelChannels = {
  'models.localMachine': {
    doc: 'This machine as the model runtime sees it (GPU backend, VRAM, RAM) and the catalogue model suggested for it, with its size, license and why.',
    input: z.object({}),
    output: z.object({ machine: Machine, suggested: LocalModelView, why: z.string() }),
  },
  'models.localList': {
    doc: "The local model catalogue with what is downloaded into Keel's home, and the other .gguf files there.",
    input: z.object({}),
    output: z.object({ models: z.array(LocalModelView), otherFiles: z.array(z.string()) }),
  },
  'models.localPull': {
    doc: 'Starts downloading a catalogue model (resuming a partial one, checked against its published SHA-256); models.localProgress reports it.',
    input: z.object({ id: catalogueId }),
    output: z.object({ id: z.string(), fileName: z.string(), approxBytes: z.number().nonnegative() }),
  },
  'models.localCancel': {
    doc: 'Stops a running download (the partial file is kept, so the next pull resumes); false when none ran.',
    input: z.object({ id: catalogueId }),
    output: z.object({ cancelled: z.boolean() }),
  },
};

/** A pull's progress (bytes, speed, time left) and its end: done (file and hash), failed (why, what to do), cancelled. */
export const localModelProgress = z.discriminatedUnion('state', [
  z.object({
    id: z.string(),
    state: z.literal('running'),
    received: z.number().nonnegative(),
    total: z.number().nonnegative().optional(),
    bytesPerSecond: z.number().nonnegative(),
    secondsLeft: z.number().nonnegative().optional(),
  }),
  z.object({
    id: z.string(),
    state: z.literal('done'),
    path: z.string(),
    sha256: z.string(),
    bytes: z.number().nonnegative(),
  }),
  z.object({
    id: z.string(),
    state: z.literal('failed'),
    kind: z.enum(['disk_full', 'wrong_hash', 'offline', 'http', 'other']),
    message: z.string(),
  }),
  z.object({ id: z.string(), state: z.literal('cancelled') }),
]);
