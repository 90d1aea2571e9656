import { parentPort } from 'node:worker_threads';
import type { SourceFile } from './locations.js';
import { mapSource } from './mapSource.js';
import type { ImportTool } from './mapped.js';

/*
 * The history import's mapping thread (sourceMapper.ts starts it): reads and maps the source files it is sent,
 * one at a time, while the importer's thread writes the sessions mapped before. Built as its own entry (the CLI
 * bundle's mapWorker.js, beside the module that starts it).
 */

export type MapRequest = { id: number; tool: ImportTool; source: SourceFile };

parentPort?.on('message', (request: MapRequest) => {
  mapSource(request.tool, request.source).then(
    (result) => parentPort?.postMessage({ id: request.id, result }),
    (error: unknown) =>
      parentPort?.postMessage({
        id: request.id,
        error: error instanceof Error ? error.message : String(error),
      }),
  );
});
