import { z } from 'zod';

/** Who runs the model; `local` (issue 34): a GGUF file Keel runs itself with node-llama-cpp. */
export const ProviderKind = z.enum(['anthropic', 'openai', 'openai-compatible', 'local']);
export type ProviderKind = z.infer<typeof ProviderKind>;

/**
 * Issue 34: a session on a local model is pinned by the file's path and SHA-256 with the runtime settings it ran
 * with, so a resume never silently switches weights (the provider refuses a file whose hash changed).
 */
export const LocalModelPin = z.object({
  path: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  contextSize: z.number().int().positive().optional(),
  threads: z.number().int().positive().optional(),
  gpu: z.boolean().optional(),
});
export type LocalModelPin = z.infer<typeof LocalModelPin>;
