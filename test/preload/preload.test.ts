import { describe, expect, it, vi } from 'vitest';
import { CHANNEL_NAMES, IPC_PUSH, ipcChannelOf, type KeelApi } from '../../main/ipc/contract.js';
import { createPreloadApi, exposeKeelApi, type PreloadIpcRenderer } from '../../preload/api.js';

/*
 * Electron cannot run here, so the preload is loaded with stand-ins for contextBridge and ipcRenderer: the
 * one place in the suite where a fake is acceptable. They record what the preload does with them.
 */

type Listener = (event: unknown, ...args: unknown[]) => void;

function fakeIpcRenderer(
  answer: (channel: string, input: unknown) => Promise<unknown> = (channel) =>
    Promise.resolve({ ok: true, value: channel }),
) {
  const invoked: { channel: string; args: unknown[] }[] = [];
  const listeners = new Map<string, Listener[]>();
  const ipc: PreloadIpcRenderer & { send?: unknown } = {
    invoke: (channel, ...args) => {
      invoked.push({ channel, args });
      return answer(channel, args[0]);
    },
    on: (channel, listener) => {
      listeners.set(channel, [...(listeners.get(channel) ?? []), listener]);
      return ipc;
    },
    send: () => {
      throw new Error('the preload must not use ipcRenderer.send');
    },
  };
  const push = (message: unknown) => {
    for (const listener of listeners.get(IPC_PUSH) ?? []) listener({ sender: 'main' }, message);
  };
  return { ipc, invoked, listeners, push };
}

/** Every leaf of the exposed object as `path:type`, walking nested objects. */
function leaves(value: unknown, prefix = ''): string[] {
  return Object.entries(value as object).flatMap(([key, child]) =>
    typeof child === 'object' && child !== null
      ? leaves(child, `${prefix}${key}.`)
      : [`${prefix}${key}:${typeof child}`],
  );
}

describe('the preload', () => {
  it('exposes exactly window.keel: one function per channel plus subscribe, nothing else', () => {
    const exposed: { key: string; api: unknown }[] = [];
    const { ipc, listeners } = fakeIpcRenderer();
    exposeKeelApi({ exposeInMainWorld: (key, api) => exposed.push({ key, api }) }, ipc);
    expect(exposed.map((e) => e.key)).toEqual(['keel']);
    const api = exposed[0]?.api;
    expect(leaves(api).sort()).toEqual(
      [...CHANNEL_NAMES.map((c) => `${c}:function`), 'subscribe:function'].sort(),
    );
    expect(Object.values(api as object)).not.toContain(ipc);
    expect(Object.isFrozen(api)).toBe(true);
    // One push listener, registered up front; no per-subscription listeners on ipcRenderer.
    expect([...listeners.keys()]).toEqual([IPC_PUSH]);
  });

  it('calls each channel through its own keel:<channel> invoke with the given input', async () => {
    const { ipc, invoked } = fakeIpcRenderer();
    const keel = createPreloadApi(ipc);
    expect(await keel.sessions.list({ limit: 5 })).toEqual({
      ok: true,
      value: ipcChannelOf('sessions.list'),
    });
    expect(await keel.app.info()).toEqual({ ok: true, value: 'keel:app.info' });
    await keel.turns.send({ sessionId: 's1', prompt: 'hi' });
    expect(invoked).toEqual([
      { channel: 'keel:sessions.list', args: [{ limit: 5 }] },
      { channel: 'keel:app.info', args: [{}] },
      { channel: 'keel:turns.send', args: [{ sessionId: 's1', prompt: 'hi' }] },
    ]);
  });

  it('turns a failed invoke into an error result instead of a rejection', async () => {
    const { ipc } = fakeIpcRenderer(() =>
      Promise.reject(new Error("No handler registered for 'keel:app.info'")),
    );
    const keel = createPreloadApi(ipc);
    expect(await keel.app.info()).toEqual({
      ok: false,
      error: { code: 'internal', message: "No handler registered for 'keel:app.info'" },
    });
  });

  it('delivers pushes by topic until unsubscribed, ignores unknown topics, and refuses to subscribe to one', () => {
    const { ipc, push } = fakeIpcRenderer();
    const keel: KeelApi = createPreloadApi(ipc);
    const deltas: unknown[] = [];
    const statuses: unknown[] = [];
    const off = keel.subscribe('turn.delta', (payload) => deltas.push(payload));
    keel.subscribe('session.status', (payload) => statuses.push(payload));
    const delta = { sessionId: 's', turnId: 't', delta: { type: 'text', text: 'hi' }, sentAt: 1 };
    push({ topic: 'turn.delta', payload: delta });
    push({ topic: 'not.a.topic', payload: 1 });
    push(null);
    off();
    push({ topic: 'turn.delta', payload: delta });
    expect(deltas).toEqual([delta]);
    expect(statuses).toEqual([]);
    expect(() => keel.subscribe('bogus' as 'turn.delta', () => undefined)).toThrow('unknown topic bogus');
  });

  it('keeps other subscribers running when one throws', () => {
    const { ipc, push } = fakeIpcRenderer();
    const keel = createPreloadApi(ipc);
    const seen: unknown[] = [];
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    keel.subscribe('sessions.changed', () => {
      throw new Error('boom');
    });
    keel.subscribe('sessions.changed', (payload) => seen.push(payload));
    push({ topic: 'sessions.changed', payload: { sessionId: 's', change: 'created' } });
    expect(seen).toHaveLength(1);
    expect(error).toHaveBeenCalledOnce();
    error.mockRestore();
  });

  it('wires Electron contextBridge and ipcRenderer in preload/index.ts', async () => {
    const exposed: string[] = [];
    vi.doMock('electron', () => ({
      contextBridge: { exposeInMainWorld: (key: string) => exposed.push(key) },
      ipcRenderer: fakeIpcRenderer().ipc,
    }));
    await import('../../preload/index.js');
    expect(exposed).toEqual(['keel']);
    vi.doUnmock('electron');
  });
});
