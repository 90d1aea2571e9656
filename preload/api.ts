import {
  buildKeelApi,
  IPC_PUSH,
  ipcChannelOf,
  isTopicName,
  type ChannelName,
  type IpcResult,
  type KeelApi,
  type TopicName,
} from '../main/ipc/contract.js';

/** The part of Electron's contextBridge the preload uses. */
export type PreloadContextBridge = { exposeInMainWorld(apiKey: string, api: unknown): void };

/** The part of Electron's ipcRenderer the preload uses; it never leaves this file. */
export type PreloadIpcRenderer = {
  invoke(channel: string, ...args: unknown[]): Promise<unknown>;
  on(channel: string, listener: (event: unknown, ...args: unknown[]) => void): unknown;
};

/**
 * Builds `window.keel` over Electron IPC: one `invoke` per contract channel (`keel:<channel>`) and one push
 * listener that fans `{ topic, payload }` out to subscribers. A failed invoke resolves to an error result.
 */
export function createPreloadApi(ipcRenderer: PreloadIpcRenderer): KeelApi {
  const handlers = new Map<string, Set<(payload: unknown) => void>>();
  ipcRenderer.on(IPC_PUSH, (_event, push) => {
    const { topic, payload } = (push ?? {}) as { topic?: unknown; payload?: unknown };
    if (!isTopicName(topic)) return;
    for (const handler of handlers.get(topic) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        console.error(`keel: a ${topic} handler failed`, error);
      }
    }
  });
  const invoke = async (channel: ChannelName, input: unknown): Promise<IpcResult<unknown>> => {
    try {
      return (await ipcRenderer.invoke(ipcChannelOf(channel), input)) as IpcResult<unknown>;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, error: { code: 'internal', message } };
    }
  };
  const subscribe = (topic: TopicName, handler: (payload: unknown) => void) => {
    let set = handlers.get(topic);
    if (!set) handlers.set(topic, (set = new Set()));
    const wrapper = (payload: unknown) => handler(payload);
    set.add(wrapper);
    return () => {
      set.delete(wrapper);
    };
  };
  return buildKeelApi(invoke, subscribe);
}

/** Exposes `window.keel` (and nothing else) in the page's main world. */
export function exposeKeelApi(contextBridge: PreloadContextBridge, ipcRenderer: PreloadIpcRenderer): void {
  contextBridge.exposeInMainWorld('keel', createPreloadApi(ipcRenderer));
}
