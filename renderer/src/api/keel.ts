import type { KeelApi } from '../../../main/ipc/contract.js';

declare global {
  interface Window {
    /** Provided by the Electron preload, or by the `keel serve` WebSocket bridge before the app mounts. */
    keel?: KeelApi;
  }
}

/** The one way the renderer talks to main; throws only if no bridge was installed (a packaging bug). */
export function keel(): KeelApi {
  const api = window.keel;
  if (!api) throw new Error('Keel could not reach its backend: no bridge was installed in this window.');
  return api;
}
