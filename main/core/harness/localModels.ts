import fs from 'node:fs';
import path from 'node:path';
import {
  LOCAL_CATALOGUE,
  localModelsDir,
  suggestLocalModel,
  type LocalCatalogueEntry,
} from '../../providers/local/catalogue.js';
import { PullError, pullModel, type PullProgress } from '../../providers/local/download.js';
import { detectLocalMachine } from '../../providers/local/host.js';
import type { LocalMachine } from '../../providers/local/protocol.js';

/*
 * Issue 34: the local models a host offers (the app's first run, Settings): the catalogue with what is downloaded,
 * the machine and its suggestion, and pulls that run in the background with progress and a cancel. `keel models
 * local` is the same catalogue and the same pullModel.
 */

/** A catalogue entry as a host shows it: size first, license, and whether its file is here. */
export type LocalModelView = {
  id: string;
  name: string;
  approxBytes: number;
  minMemoryGb: number;
  license: string;
  fileName: string;
  downloaded: boolean;
};

/** Where a catalogue entry downloads from. `baseOverride` (a test seam: see `localCatalogueBase`) swaps the origin. */
export function catalogueUrl(entry: LocalCatalogueEntry, baseOverride?: string): string {
  const fileName = path.posix.basename(new URL(entry.url).pathname);
  return baseOverride ? `${baseOverride.replace(/\/$/, '')}/${fileName}` : entry.url;
}

/**
 * The test seam `keel serve` reads (`KEEL_TEST_LOCAL_MODEL_BASE`): an origin every catalogue download is fetched
 * from instead of Hugging Face. Only a loopback http origin is accepted, so it can point downloads at this machine
 * and nowhere else; the published hash is still checked as for any download.
 */
export function localCatalogueBase(env: NodeJS.ProcessEnv): string | undefined {
  const value = env['KEEL_TEST_LOCAL_MODEL_BASE'];
  if (value === undefined || value === '') return undefined;
  if (!/^http:\/\/127\.0\.0\.1:\d{1,5}\/?$/.test(value)) {
    throw new Error(`KEEL_TEST_LOCAL_MODEL_BASE must be http://127.0.0.1:<port>, not ${value}`);
  }
  return value;
}

function fileNameOf(entry: LocalCatalogueEntry): string {
  return path.posix.basename(new URL(entry.url).pathname);
}

/** The catalogue with each entry's download state, and the other .gguf files in `<home>/models/`. */
export function listLocalModels(home: string): { models: LocalModelView[]; otherFiles: string[] } {
  const dir = localModelsDir(home);
  const files = fs.existsSync(dir) ? fs.readdirSync(dir).filter((file) => file.endsWith('.gguf')) : [];
  const models = LOCAL_CATALOGUE.map((entry) => ({
    id: entry.id,
    name: entry.name,
    approxBytes: entry.approxBytes,
    minMemoryGb: entry.minMemoryGb,
    license: entry.license,
    fileName: fileNameOf(entry),
    downloaded: files.includes(fileNameOf(entry)),
  }));
  const otherFiles = files
    .filter((file) => !models.some((model) => model.fileName === file))
    .map((file) => path.join(dir, file));
  return { models, otherFiles };
}

/** The machine as the model runtime sees it, and the catalogue model suggested for it with why. */
export async function localMachineSuggestion(
  home: string,
): Promise<{ machine: LocalMachine; suggested: LocalModelView; why: string }> {
  const machine = await detectLocalMachine();
  const { entry, why } = suggestLocalModel(machine);
  const suggested = listLocalModels(home).models.find((model) => model.id === entry.id)!;
  return { machine, suggested, why };
}

/** Why a pull failed, as a host offers the way out: free space, retry, check the connection. */
export type PullFailureKind = 'disk_full' | 'wrong_hash' | 'offline' | 'http' | 'other';

/** Sorts a pull's failure by what the user can do about it. Pure. */
export function classifyPullFailure(error: unknown): { kind: PullFailureKind; message: string } {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof PullError) {
    if (message.startsWith('the disk is full')) return { kind: 'disk_full', message };
    if (message.includes('is not the published file')) return { kind: 'wrong_hash', message };
    return { kind: 'http', message };
  }
  // fetch's own failure: no route, refused, DNS (its cause holds the code).
  const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  if (error instanceof TypeError && /fetch failed/.test(message)) {
    return {
      kind: 'offline',
      message: `the download server could not be reached${code ? ` (${code})` : ''}: check the connection`,
    };
  }
  return { kind: 'other', message };
}

/** What a running or finished pull reports. */
export type LocalPullUpdate =
  | ({ id: string; state: 'running' } & PullProgress)
  | { id: string; state: 'done'; path: string; sha256: string; bytes: number }
  | { id: string; state: 'failed'; kind: PullFailureKind; message: string }
  | { id: string; state: 'cancelled' };

/**
 * Background pulls of catalogue models into `<home>/models/`, one per id at a time. `start` returns at once;
 * `onUpdate` hears progress (at most every `intervalMs`, and the last byte) and the end. A cancel keeps the
 * part file, so the next pull resumes.
 */
export function createLocalPulls(options: {
  home: string;
  onUpdate: (update: LocalPullUpdate) => void;
  baseOverride?: string;
  intervalMs?: number;
}) {
  const running = new Map<string, AbortController>();
  const interval = options.intervalMs ?? 100;
  return {
    start(id: string): { fileName: string; approxBytes: number } {
      const entry = LOCAL_CATALOGUE.find((candidate) => candidate.id === id);
      if (!entry) throw new Error(`"${id}" is not in the local model catalogue`);
      const fileName = fileNameOf(entry);
      if (running.has(id)) return { fileName, approxBytes: entry.approxBytes };
      const abort = new AbortController();
      running.set(id, abort);
      let last = 0;
      void pullModel({
        url: catalogueUrl(entry, options.baseOverride),
        dest: path.join(localModelsDir(options.home), fileName),
        signal: abort.signal,
        onProgress: (progress) => {
          const now = Date.now();
          if (now - last < interval && progress.received !== progress.total) return;
          last = now;
          options.onUpdate({ id, state: 'running', ...progress });
        },
      }).then(
        (pulled) => {
          running.delete(id);
          options.onUpdate({ id, state: 'done', ...pulled });
        },
        (error: unknown) => {
          running.delete(id);
          if (abort.signal.aborted) options.onUpdate({ id, state: 'cancelled' });
          else options.onUpdate({ id, state: 'failed', ...classifyPullFailure(error) });
        },
      );
      return { fileName, approxBytes: entry.approxBytes };
    },
    /** Stops a pull; false when none of that id runs. */
    cancel(id: string): boolean {
      const abort = running.get(id);
      abort?.abort();
      return abort !== undefined;
    },
    close(): void {
      for (const abort of running.values()) abort.abort();
    },
  };
}

export type LocalPulls = ReturnType<typeof createLocalPulls>;
