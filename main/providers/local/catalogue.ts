import os from 'node:os';
import path from 'node:path';

/**
 * Open-weight GGUF models good at code and tool use, one per machine size. Sizes are approximate (the download
 * reports the real one); the SHA-256 is not written here but read at download time from Hugging Face's published
 * LFS hash (X-Linked-Etag), so a catalogue line cannot go stale against a re-uploaded file.
 */
export type LocalCatalogueEntry = {
  id: string;
  name: string;
  /** Machines with at least this much memory (GB) run it comfortably. */
  minMemoryGb: 8 | 16 | 32;
  approxBytes: number;
  license: string;
  url: string;
};

const HF = 'https://huggingface.co';

export const LOCAL_CATALOGUE: readonly LocalCatalogueEntry[] = [
  {
    id: 'qwen2.5-coder-3b',
    name: 'Qwen2.5 Coder 3B Instruct (Q4_K_M)',
    minMemoryGb: 8,
    approxBytes: 1.9e9,
    license: 'Qwen Research License',
    url: `${HF}/bartowski/Qwen2.5-Coder-3B-Instruct-GGUF/resolve/main/Qwen2.5-Coder-3B-Instruct-Q4_K_M.gguf`,
  },
  {
    id: 'qwen2.5-coder-7b',
    name: 'Qwen2.5 Coder 7B Instruct (Q4_K_M)',
    minMemoryGb: 16,
    approxBytes: 4.7e9,
    license: 'Apache-2.0',
    url: `${HF}/bartowski/Qwen2.5-Coder-7B-Instruct-GGUF/resolve/main/Qwen2.5-Coder-7B-Instruct-Q4_K_M.gguf`,
  },
  {
    id: 'qwen2.5-coder-32b',
    name: 'Qwen2.5 Coder 32B Instruct (Q4_K_M)',
    minMemoryGb: 32,
    approxBytes: 19.9e9,
    license: 'Apache-2.0',
    url: `${HF}/bartowski/Qwen2.5-Coder-32B-Instruct-GGUF/resolve/main/Qwen2.5-Coder-32B-Instruct-Q4_K_M.gguf`,
  },
];

/** The largest catalogue model for a machine with this much memory (bytes), else the smallest. */
export function suggestedLocalModel(totalMemoryBytes: number = os.totalmem()): LocalCatalogueEntry {
  const gb = totalMemoryBytes / 1024 ** 3;
  const fitting = LOCAL_CATALOGUE.filter((entry) => gb >= entry.minMemoryGb * 0.9);
  return fitting.at(-1) ?? LOCAL_CATALOGUE[0]!;
}

/** What the suggestion reads of a machine (protocol.ts `LocalMachine`). */
export type MachineMemory = {
  ramBytes: number;
  gpu: string | false;
  vramBytes: number;
  unifiedBytes: number;
};

/** Room a model needs beyond its file: the KV cache of a working context and the runtime's buffers. */
const VRAM_HEADROOM = 1.25;

/**
 * The catalogue model for this machine, and why. A discrete GPU (CUDA, Vulkan) runs a model fast only when the
 * whole file fits its VRAM with room for the context, so the largest that fits is suggested; where nothing fits
 * the VRAM, or there is no GPU, or the GPU shares the machine's memory (Apple silicon's Metal: `unifiedBytes`),
 * the machine's RAM decides, as `suggestedLocalModel`. Pure.
 */
export function suggestLocalModel(machine: MachineMemory): { entry: LocalCatalogueEntry; why: string } {
  const gb = (bytes: number): string => `${(bytes / 1024 ** 3).toFixed(1)} GB`;
  const byRam = suggestedLocalModel(machine.ramBytes);
  if (machine.gpu === false) return { entry: byRam, why: `CPU only, ${gb(machine.ramBytes)} of memory` };
  if (machine.unifiedBytes > 0) {
    return { entry: byRam, why: `${machine.gpu} sharing ${gb(machine.ramBytes)} of memory with the CPU` };
  }
  const inVram = LOCAL_CATALOGUE.filter((entry) => entry.approxBytes * VRAM_HEADROOM <= machine.vramBytes).at(
    -1,
  );
  if (inVram) return { entry: inVram, why: `${machine.gpu} with ${gb(machine.vramBytes)} of VRAM` };
  return {
    entry: byRam,
    why: `${machine.gpu} with ${gb(machine.vramBytes)} of VRAM, too little for any of these: ${gb(machine.ramBytes)} of memory decides`,
  };
}

/**
 * Where a model comes from: a catalogue id, an `hf:owner/repo/file.gguf` URI (optionally `hf:owner/repo@rev/…`),
 * or an https URL. Undefined for anything else (a local path is used in place, not pulled).
 */
export function resolveModelSource(spec: string): { url: string; fileName: string } | undefined {
  const known = LOCAL_CATALOGUE.find((entry) => entry.id === spec);
  if (known) return { url: known.url, fileName: path.posix.basename(new URL(known.url).pathname) };
  const hf = /^hf:([^/\s]+)\/([^/@\s]+)(?:@([^/\s]+))?\/(.+\.gguf)$/.exec(spec);
  if (hf) {
    const [, owner, repo, revision, file] = hf as unknown as [
      string,
      string,
      string,
      string | undefined,
      string,
    ];
    return {
      url: `${HF}/${owner}/${repo}/resolve/${revision ?? 'main'}/${file}`,
      fileName: path.posix.basename(file),
    };
  }
  // https, or plain http to this machine only (a local mirror; the tests' server).
  if (/^(https:\/\/\S+|http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\/\S+)\.gguf(\?\S*)?$/.test(spec)) {
    return { url: spec, fileName: path.posix.basename(new URL(spec).pathname) };
  }
  return undefined;
}

/** Models live once in Keel's home, shared by every session: `<home>/models/<file>`. */
export function localModelsDir(home: string): string {
  return path.join(home, 'models');
}
