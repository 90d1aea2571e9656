import type { SessionEvent } from '../../../main/common/events.js';
import type { ChannelName, ChannelOutput, IpcResult, TopicName } from '../../../main/ipc/contract.js';
import { createHandlers, type Handlers } from '../../../main/ipc/handlers.js';
import type { Push } from '../../../main/ipc/hub.js';
import type { ProviderServer } from '../../support/providerServer.js';
import {
  closeSessionFixture,
  eventsOf,
  type SessionFixture,
  type SessionFixtureHooks,
  startSessionFixture,
  useSessionFixture,
} from '../../support/sessionFixture.js';

/** A real home, project folder, scripted provider server and handler table, as the IPC tests use them. */
export type IpcFixture = {
  dir: string;
  home: string;
  project: string;
  server: ProviderServer;
  handlers: Handlers;
  pushes: Push[];
  /** Calls a channel as `client` and returns its value; throws with the error when it is not ok. */
  call<C extends ChannelName>(channel: C, input?: unknown, client?: string): Promise<ChannelOutput<C>>;
  /** Calls a channel that must fail and returns its error. */
  fail(channel: string, input?: unknown, client?: string): Promise<{ code: string; message: string }>;
  waitForPush<T extends TopicName>(
    topic: T,
    match?: (payload: Extract<Push, { topic: T }>['payload']) => boolean,
    timeoutMs?: number,
  ): Promise<Extract<Push, { topic: T }>['payload']>;
  /** Resolves once the turn's final session.status was pushed. */
  turnEnded(
    sessionId: string,
    turnId: string,
  ): Promise<Extract<Push, { topic: 'session.status' }>['payload']>;
  /** A session on the scripted model. */
  newSession(extra?: Record<string, unknown>): Promise<ChannelOutput<'sessions.create'>['session']>;
  eventsOf(sessionId: string): SessionEvent[];
  close(): Promise<void>;
};

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** Builds the fixture in a fresh temp folder; `close` removes everything again. */
export async function startFixture(prefix: string): Promise<IpcFixture> {
  const { dir, home, project, server } = await startSessionFixture(prefix);
  const handlers = createHandlers({ home, mode: 'serve', version: '1', env });
  const pushes: Push[] = [];
  handlers.hub.subscribe((push) => pushes.push(push));

  const { call, fail } = ipcCalls(() => handlers);
  const waitForPush = pushWaiter(
    () => handlers,
    () => pushes,
    20_000,
  );
  return {
    dir,
    home,
    project,
    server,
    handlers,
    pushes,
    call,
    fail,
    waitForPush,
    turnEnded: (sessionId, turnId) =>
      waitForPush('session.status', (p) => p.sessionId === sessionId && p.turnId === turnId && !p.running),
    newSession: async (extra = {}) =>
      (await call('sessions.create', scriptedSessionInput({ project, server }, extra))).session,
    eventsOf: (sessionId) => eventsOf(home, sessionId),
    close: async () => {
      await handlers.close();
      await closeSessionFixture({ dir, server });
    },
  };
}

/** The running test's session fixture and handler table (see `useIpcFixture`). */
export type IpcTestFixture = SessionFixture &
  Pick<IpcFixture, 'call' | 'fail' | 'waitForPush'> & {
    /** The handler table; a test may close it and set another here (whose pushes are not collected). */
    handlers: Handlers;
    /** What the table made before the test pushed, in order. */
    readonly pushes: Push[];
  };

/**
 * An IPC test file's per-test set-up, as each wrote it out: `useSessionFixture` (then `prepare`), a handler
 * table from `handlers(fixture)` whose pushes are collected; after the test the table is closed (`cleanup`,
 * then the fixture). `call`, `fail` and `waitForPush` (15 s unless `pushTimeoutMs`) use the table of the
 * moment. Call it at the top level of the file; read its fields inside tests.
 */
export function useIpcFixture(
  prefix: string,
  options: SessionFixtureHooks & { handlers: (fixture: SessionFixture) => Handlers; pushTimeoutMs?: number },
): IpcTestFixture {
  let handlers: Handlers | undefined;
  let pushes: Push[] = [];
  const current = (): Handlers => {
    if (handlers === undefined) throw new Error('the handler table exists only while a test runs');
    return handlers;
  };
  const fixture = useSessionFixture(prefix, {
    ...options,
    prepare: async (made) => {
      await options.prepare?.(made);
      handlers = options.handlers(made);
      pushes = [];
      handlers.hub.subscribe((push) => pushes.push(push));
    },
    cleanup: async (made) => {
      const table = handlers;
      handlers = undefined;
      await table?.close();
      await options.cleanup?.(made);
    },
  });
  const { call, fail } = ipcCalls(current);
  return Object.defineProperties(fixture, {
    handlers: {
      get: current,
      set: (next: Handlers) => {
        handlers = next;
      },
    },
    pushes: { get: () => pushes },
    call: { value: call },
    fail: { value: fail },
    waitForPush: { value: pushWaiter(current, () => pushes, options.pushTimeoutMs ?? 15_000) },
  }) as IpcTestFixture;
}

/**
 * `call` / `fail` on the handler table `current()` returns at the time of the call (a test may swap it):
 * `call` returns the value and throws with the error when it is not ok; `fail` returns the error and
 * throws when the call succeeded.
 */
export function ipcCalls(current: () => Handlers): Pick<IpcFixture, 'call' | 'fail'> {
  return {
    call: async <C extends ChannelName>(channel: C, input: unknown = {}, client?: string) => {
      const result = (await current().invoke(channel, input, client)) as IpcResult<ChannelOutput<C>>;
      if (!result.ok) throw new Error(`${channel} failed: ${result.error.code}: ${result.error.message}`);
      return result.value;
    },
    fail: async (channel: string, input: unknown = {}, client?: string) => {
      const result = await current().invoke(channel, input, client);
      if (result.ok) throw new Error(`${channel} unexpectedly succeeded`);
      return result.error;
    },
  };
}

/**
 * Resolves with the first push of `topic` matching `match`, among `pushes()` already seen or from the hub of
 * `current()`; rejects after `timeoutMs` (default `defaultTimeoutMs`).
 */
export function pushWaiter(
  current: () => Handlers,
  pushes: () => readonly Push[],
  defaultTimeoutMs: number,
): IpcFixture['waitForPush'] {
  return (topic, match = () => true, timeoutMs = defaultTimeoutMs) => {
    const seen = pushes().find((push) => push.topic === topic && match(push.payload as never));
    if (seen) return Promise.resolve(seen.payload as never);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no ${topic} push within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = current().hub.subscribe((push) => {
        if (push.topic === topic && match(push.payload as never)) {
          clearTimeout(timer);
          off();
          resolve(push.payload as never);
        }
      });
    });
  };
}

/** sessions.create's input for a session in `project` on the server's scripted model (context 32 000), plus `extra`. */
export function scriptedSessionInput(
  fixture: { project: string; server: ProviderServer },
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    projectFolder: fixture.project,
    provider: 'openai-compatible',
    baseUrl: fixture.server.openaiBaseUrl,
    model: 'scripted-model',
    contextWindow: 32_000,
    ...extra,
  };
}
