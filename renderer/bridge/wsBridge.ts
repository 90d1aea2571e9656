import {
  buildKeelApi,
  WS_MAX_MESSAGE_BYTES,
  WS_PATH,
  type ChannelName,
  type IpcResult,
  type KeelApi,
  type TopicName,
} from '../../main/ipc/contract.js';
import { setServeConnection } from './connection.js';

/**
 * `window.keel` for the renderer under `keel serve`: the same API as the Electron preload (both are
 * `buildKeelApi` over a transport), carried over one WebSocket to 127.0.0.1 with the per-launch token. The
 * socket reconnects after a drop; calls made meanwhile wait for it, and calls in flight when it dropped
 * resolve with an error (never a rejection). Written against a minimal socket interface so it runs in the
 * browser and, in tests, under Node with the `ws` package.
 */

/** The part of the browser WebSocket this bridge uses. */
export type BridgeSocket = {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: unknown) => void) | null;
  onerror: ((event: unknown) => void) | null;
};

/** Options of `connectWsBridge`. */
export type WsBridgeOptions = {
  /** `ws://127.0.0.1:PORT/ws?token=...` */
  url: string;
  /** Opens a socket; the browser's WebSocket by default. */
  openSocket?: (url: string) => BridgeSocket;
  /** First reconnect delay; doubles up to 5 s. Default 250 ms. */
  reconnectDelayMs?: number;
  /**
   * Names this page to the server across reconnects (added to the URL as `client=`), so what it owns there
   * (interactive terminals, output flow control) survives a dropped connection. Default: random per bridge.
   */
  clientId?: string;
  /** Told how the link is doing (issue #37: the page's banner); see bridge/connection.ts. */
  onState?: (state: BridgeState) => void;
  /**
   * Asked after a reconnect fails: is the server there (`ok`), refusing this page's token (`refused`), or
   * not answering at all (`unreachable`)? Without it, a drop is only `lost`.
   */
  probe?: () => Promise<'ok' | 'refused' | 'unreachable'>;
};

/** What `onState` is told: connected (again), or why not. */
export type BridgeState =
  { kind: 'open'; restored: boolean } | { kind: 'lost' } | { kind: 'unreachable' } | { kind: 'refused' };

/** A connected bridge: the API plus a way to shut it down (tests, page unload). */
export type WsBridge = { api: KeelApi; close(): void; readonly clientId: string };

const OPEN = 1;
const MAX_RECONNECT_DELAY_MS = 5_000;

type Pending = { resolve: (result: IpcResult<unknown>) => void };

/** Connects to `keel serve` and returns the KeelApi over that connection. */
export function connectWsBridge(options: WsBridgeOptions): WsBridge {
  const openSocket =
    options.openSocket ??
    ((url: string) => {
      const WebSocketClass = (globalThis as unknown as { WebSocket: new (url: string) => BridgeSocket })
        .WebSocket;
      return new WebSocketClass(url);
    });
  const firstDelay = options.reconnectDelayMs ?? 250;
  const clientId = options.clientId ?? newClientId();
  const url = `${options.url}${options.url.includes('?') ? '&' : '?'}client=${encodeURIComponent(clientId)}`;
  const pending = new Map<number, Pending>();
  const queue: string[] = [];
  const handlers = new Map<string, Set<(payload: unknown) => void>>();
  let nextId = 1;
  let delay = firstDelay;
  let closed = false;
  let socket: BridgeSocket;
  // Reconnects failed in a row since the last open; whether the link was ever open (a drop, not a first try).
  let failures = 0;
  let everOpen = false;
  const report = (state: BridgeState) => options.onState?.(state);

  const failPending = (message: string) => {
    for (const entry of pending.values()) entry.resolve({ ok: false, error: { code: 'internal', message } });
    pending.clear();
  };

  const connect = () => {
    socket = openSocket(url);
    socket.onopen = () => {
      delay = firstDelay;
      report({ kind: 'open', restored: everOpen && failures > 0 });
      everOpen = true;
      failures = 0;
      for (const text of queue.splice(0)) socket.send(text);
    };
    socket.onmessage = (event) => {
      let message: { id?: unknown; result?: IpcResult<unknown>; topic?: unknown; payload?: unknown };
      try {
        message = JSON.parse(String(event.data)) as typeof message;
      } catch {
        return;
      }
      if (typeof message.id === 'number' && message.result) {
        const entry = pending.get(message.id);
        pending.delete(message.id);
        entry?.resolve(message.result);
      } else if (typeof message.topic === 'string') {
        for (const handler of handlers.get(message.topic) ?? []) {
          try {
            handler(message.payload);
          } catch (error) {
            console.error(`keel: a ${message.topic} handler failed`, error);
          }
        }
      }
    };
    socket.onerror = () => undefined;
    socket.onclose = () => {
      failPending('the connection to keel serve was lost; try again');
      if (closed) return;
      failures++;
      // The first drop may be a blip; from the second failure on, the page asks why, to say what to do.
      if (failures >= 2 && options.probe) {
        options.probe().then(
          (answer) => {
            if (!closed) report(answer === 'ok' ? { kind: 'lost' } : { kind: answer });
          },
          () => undefined,
        );
      } else report({ kind: 'lost' });
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, MAX_RECONNECT_DELAY_MS);
    };
  };
  connect();

  const invoke = (channel: ChannelName, input: unknown) =>
    new Promise<IpcResult<unknown>>((resolve) => {
      if (closed) {
        resolve({ ok: false, error: { code: 'internal', message: 'the bridge is closed' } });
        return;
      }
      const id = nextId++;
      const text = JSON.stringify({ id, channel, input });
      // Issue #32: a prompt with files can outgrow what keel serve takes; said here, the link is kept.
      const bytes = new TextEncoder().encode(text).length;
      if (bytes > WS_MAX_MESSAGE_BYTES) {
        const mb = (n: number) => `${(n / (1024 * 1024)).toFixed(1)} MB`;
        resolve({
          ok: false,
          error: {
            code: 'invalid_input',
            message: `this request is ${mb(bytes)} and keel serve takes at most ${mb(WS_MAX_MESSAGE_BYTES)} (files travel in it); send fewer or smaller files, or use the desktop app or keel run --file`,
          },
        });
        return;
      }
      pending.set(id, { resolve });
      if (socket.readyState === OPEN) socket.send(text);
      else queue.push(text);
    });

  const subscribe = (topic: TopicName, handler: (payload: unknown) => void) => {
    let set = handlers.get(topic);
    if (!set) handlers.set(topic, (set = new Set()));
    // A wrapper per subscription, so subscribing one function twice needs two unsubscribes.
    const wrapper = (payload: unknown) => handler(payload);
    set.add(wrapper);
    return () => {
      set.delete(wrapper);
    };
  };

  return {
    api: buildKeelApi(invoke, subscribe),
    clientId,
    close() {
      closed = true;
      failPending('the bridge is closed');
      socket.close(1000, 'closed');
    },
  };
}

/** A random client id (the page's name to the server across reconnects). */
function newClientId(): string {
  const bytes = new Uint8Array(16);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The bridge's WebSocket URL for a page served by `keel serve` (same host, token from the page URL). */
export function bridgeUrlFor(location: { host: string; search: string }): string {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  return `ws://${location.host}${WS_PATH}?token=${encodeURIComponent(token)}`;
}

/**
 * Gives the page its `window.keel`: the preload's in Electron (already there), else a WebSocket bridge to
 * the `keel serve` that served the page. Call once at startup, before rendering.
 */
export function installKeelBridge(): KeelApi {
  const page = globalThis as unknown as {
    keel?: KeelApi;
    location: { host: string; search: string; href: string };
    fetch: (url: string, init: { method: string; cache: string }) => Promise<{ status: number }>;
  };
  if (page.keel) return page.keel;
  const address = `http://${page.location.host}/`;
  const { api } = connectWsBridge({
    url: bridgeUrlFor(page.location),
    onState: (state) =>
      setServeConnection(
        state.kind === 'unreachable' || state.kind === 'refused' ? { kind: state.kind, address } : state,
      ),
    // The page's own address, with its token or cookie: 401 is a token this server does not take.
    probe: () =>
      page.fetch(page.location.href, { method: 'HEAD', cache: 'no-store' }).then(
        (response) => (response.status === 401 ? 'refused' : 'ok'),
        () => 'unreachable' as const,
      ),
  });
  Object.defineProperty(globalThis, 'keel', { value: api, writable: false, configurable: false });
  return api;
}
