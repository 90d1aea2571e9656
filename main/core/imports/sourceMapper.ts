import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SourceFile } from './locations.js';
import { mapSource, type MapResult } from './mapSource.js';
import type { ImportTool, MappedFile, MappedSession } from './mapped.js';
import type { MapRequest } from './mapWorker.js';

/*
 * Where the history import maps its sources: a thread of its own (mapWorker.ts), so that reading, parsing and
 * mapping the next file runs on the other core while this thread writes the last one's session (SQLite, the
 * index, fsync). Without the worker script beside this module (a source checkout run by the tests, a bundle
 * without it) or once the thread fails, the same work is done here: the result is the same either way.
 */

type Pending = { request: MapRequest; resolve: (result: MapResult) => void; reject: (error: Error) => void };

export class SourceMapper {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** `script`: the worker's file; default mapWorker.js beside this module, if it is there. */
  constructor(script: string | undefined = defaultMapWorkerScript()) {
    if (script === undefined) return;
    try {
      this.worker = new Worker(script);
    } catch {
      return; // no thread: mapped here
    }
    this.worker.unref(); // never what keeps a CLI command alive
    this.worker.on('message', (message: { id: number; result?: MapResult; error?: string }) => {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (message.result) pending.resolve(revived(message.result));
      else pending.reject(new Error(message.error ?? 'the mapping thread failed'));
    });
    // A thread that dies (out of memory, a crash) hands its work back: it is done here.
    const fail = (): void => {
      this.worker = undefined;
      const left = [...this.pending.values()];
      this.pending.clear();
      for (const { request, resolve, reject } of left)
        mapSource(request.tool, request.source).then(resolve, reject);
    };
    this.worker.on('error', fail);
    this.worker.on('exit', fail);
  }

  /** Whether the work goes to the thread (else it is done on this one). */
  get threaded(): boolean {
    return this.worker !== undefined;
  }

  /** Reads and maps one source, on the thread when there is one. */
  map(tool: ImportTool, source: SourceFile): Promise<MapResult> {
    const worker = this.worker;
    if (!worker) return mapSource(tool, source);
    const request: MapRequest = { id: this.nextId++, tool, source };
    return new Promise((resolve, reject) => {
      this.pending.set(request.id, { request, resolve, reject });
      worker.ref(); // work in flight holds the process until it is answered
      worker.postMessage(request);
    }).finally(() => {
      if (this.pending.size === 0) this.worker?.unref();
    }) as Promise<MapResult>;
  }

  /** Ends the thread; work still in flight is refused (its caller has gone). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    for (const { reject } of this.pending.values()) reject(new Error('the import ended'));
    this.pending.clear();
    if (worker) {
      worker.removeAllListeners('exit');
      worker.removeAllListeners('error');
      await worker.terminate();
    }
  }
}

/** mapWorker.js beside this module (dist/, the CLI bundle), or undefined when it is not there. */
export function defaultMapWorkerScript(): string | undefined {
  const script = fileURLToPath(new URL('./mapWorker.js', import.meta.url));
  return fs.existsSync(script) ? script : undefined;
}

/** A result as it came from the thread: its files' bytes are Uint8Arrays there, Buffers again here. */
function revived(result: MapResult): MapResult {
  return result.mapped ? { ...result, mapped: revivedSession(result.mapped) } : result;
}

function revivedSession(session: MappedSession): MappedSession {
  const files = session.files.map((file): MappedFile => ({
    ...file,
    data: Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength),
  }));
  return { ...session, files, children: session.children.map(revivedSession) };
}
