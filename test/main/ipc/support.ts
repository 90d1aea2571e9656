import fs from 'node:fs';
import path from 'node:path';
import type { SessionEvent } from '../../../main/core/log/events.js';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import type { ChannelName, ChannelOutput, IpcResult, TopicName } from '../../../main/ipc/contract.js';
import { createHandlers, type Handlers } from '../../../main/ipc/handlers.js';
import type { Push } from '../../../main/ipc/hub.js';
import { makeTempDir, removeTempDir } from '../../support/cli.js';
import { ProviderServer } from '../../support/providerServer.js';

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
  const dir = fs.realpathSync(makeTempDir(prefix));
  const home = path.join(dir, 'home');
  const project = path.join(dir, 'project');
  fs.mkdirSync(project, { recursive: true });
  const server = await new ProviderServer().start();
  const handlers = createHandlers({ home, mode: 'serve', version: '1', env });
  const pushes: Push[] = [];
  handlers.hub.subscribe((push) => pushes.push(push));

  const call = async <C extends ChannelName>(channel: C, input: unknown = {}, client?: string) => {
    const result = (await handlers.invoke(channel, input, client)) as IpcResult<ChannelOutput<C>>;
    if (!result.ok) throw new Error(`${channel} failed: ${result.error.code}: ${result.error.message}`);
    return result.value;
  };
  const fail = async (channel: string, input: unknown = {}, client?: string) => {
    const result = await handlers.invoke(channel, input, client);
    if (result.ok) throw new Error(`${channel} unexpectedly succeeded`);
    return result.error;
  };
  const waitForPush: IpcFixture['waitForPush'] = (topic, match = () => true, timeoutMs = 20_000) => {
    const seen = pushes.find((push) => push.topic === topic && match(push.payload as never));
    if (seen) return Promise.resolve(seen.payload as never);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        off();
        reject(new Error(`no ${topic} push within ${timeoutMs} ms`));
      }, timeoutMs);
      const off = handlers.hub.subscribe((push) => {
        if (push.topic === topic && match(push.payload as never)) {
          clearTimeout(timer);
          off();
          resolve(push.payload as never);
        }
      });
    });
  };
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
      (
        await call('sessions.create', {
          projectFolder: project,
          provider: 'openai-compatible',
          baseUrl: server.openaiBaseUrl,
          model: 'scripted-model',
          contextWindow: 32_000,
          ...extra,
        })
      ).session,
    eventsOf: (sessionId) => {
      const log = SessionLog.open(home, sessionId);
      try {
        return log.read();
      } finally {
        log.close();
      }
    },
    close: async () => {
      await handlers.close();
      await server.close();
      removeTempDir(dir);
    },
  };
}
