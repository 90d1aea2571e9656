import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ModelPin } from '../../common/events.js';
import { localModelsDir, resolveModelSource } from './catalogue.js';
import { sha256File } from './host.js';

/** The context window a new session gets when no flag names one: the model's own, at most this. */
const DEFAULT_WINDOW_CAP = 32_768;

/**
 * The file a model spec names: an existing path, else a catalogue id, `hf:` URI or URL whose file was pulled into
 * `<home>/models/`, else a file name there. Undefined when none exists.
 */
export function localModelFile(home: string, spec: string): string | undefined {
  if (fs.existsSync(spec) && fs.statSync(spec).isFile()) return path.resolve(spec);
  const name = resolveModelSource(spec)?.fileName ?? path.basename(spec);
  const pulled = path.join(localModelsDir(home), name);
  return fs.existsSync(pulled) ? pulled : undefined;
}

/**
 * A new session's pin on a local model: the file, its SHA-256, and a context window from the model's metadata
 * (its training context), capped so its KV cache fits this machine's memory, unless `contextWindow` is given;
 * settings' `providers.local.threads`, when set, as `runtime.threads`.
 */
export async function localModelPin(
  home: string,
  spec: string,
  contextWindow?: number,
  runtime: { threads?: number | undefined } = {},
): Promise<ModelPin> {
  const file = localModelFile(home, spec);
  if (!file) {
    throw new Error(
      `no local model "${spec}": pass a .gguf path, or download it first (keel models local pull ${spec})`,
    );
  }
  const { readGgufFileInfo } = await import('node-llama-cpp');
  const info = await readGgufFileInfo(file, { readTensorInfo: false });
  const arch = info.architectureMetadata as { context_length?: number } | undefined;
  const trained = arch?.context_length ?? 4096;
  // The KV cache takes roughly 128 KiB per token for a 7B model at F16; keep it under a quarter of the RAM.
  const fits = Math.floor(os.totalmem() / 4 / (128 * 1024));
  const window = contextWindow ?? Math.max(2048, Math.min(trained, DEFAULT_WINDOW_CAP, fits));
  return {
    provider: 'local',
    model: path.basename(file, '.gguf'),
    contextWindow: window,
    local: {
      path: file,
      sha256: await sha256File(file),
      contextSize: window,
      ...(runtime.threads ? { threads: runtime.threads } : {}),
    },
  };
}
