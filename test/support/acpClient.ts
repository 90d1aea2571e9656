import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  client,
  type ClientConnection,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from '@agentclientprotocol/sdk';
import { trackChild, waitForClose } from './childProcesses.js';
import { CLI_BIN, REPO_ROOT } from './cli.js';
import type { ProviderServer } from './providerServer.js';
import { SCRIPTED_MODEL } from './sessionFixture.js';

/*
 * An editor as the tests play it: `keel acp` started as a child process, driven over its stdio by the
 * official SDK's client side, with every `session/update` kept and permission questions answered by the test.
 */

/** A running `keel acp` and the client connected to it. */
export type AcpSession = {
  child: ChildProcess;
  connection: ClientConnection;
  /** Every session/update received, in order. */
  updates: SessionNotification[];
  /** Every permission question asked, in order. */
  permissions: RequestPermissionRequest[];
  /** How the next permission question is answered (default: cancelled). */
  answer: (request: RequestPermissionRequest) => Promise<RequestPermissionResponse>;
  stderr: () => string;
  /** Resolves once an update matches (20 s cap). */
  waitForUpdate: (match: (update: SessionNotification) => boolean) => Promise<void>;
  close: () => Promise<void>;
};

/** Writes settings.json so new sessions use the scripted server's model with `policy`. */
export function writeAcpSettings(home: string, server: ProviderServer, policy = 'ask'): void {
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(
    path.join(home, 'settings.json'),
    JSON.stringify({
      defaults: {
        provider: 'openai-compatible',
        model: SCRIPTED_MODEL,
        baseUrl: server.openaiBaseUrl,
        policy,
      },
      contextWindows: { [SCRIPTED_MODEL]: 32_000 },
    }),
  );
}

/** Starts `keel --home HOME acp` (with `extraEnv`), connects the SDK's client to it and initializes. */
export async function startAcp(home: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<AcpSession> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extraEnv };
  delete env.KEEL_HOME;
  delete env.KEEL_CRASH_AT;
  const child = trackChild(
    spawn(process.execPath, [CLI_BIN, '--home', home, 'acp'], {
      cwd: REPO_ROOT,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    }),
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const updates: SessionNotification[] = [];
  const permissions: RequestPermissionRequest[] = [];
  const waiters = new Set<() => void>();
  const session: AcpSession = {
    child,
    updates,
    permissions,
    answer: () => Promise.resolve({ outcome: { outcome: 'cancelled' } }),
    stderr: () => stderr,
    connection: undefined as unknown as ClientConnection,
    waitForUpdate: (match) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (!updates.some(match)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no such update; stderr: ${stderr}`));
        }, 20_000);
        waiters.add(check);
        check();
      }),
    close: async () => {
      session.connection.close();
      child.stdin.end();
      const end = waitForClose(child);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await end;
      clearTimeout(timer);
    },
  };
  const app = client({ name: 'keel-test-editor' })
    .onNotification('session/update', ({ params }) => {
      updates.push(params);
      for (const waiter of [...waiters]) waiter();
    })
    .onRequest('session/request_permission', ({ params }) => {
      permissions.push(params);
      return session.answer(params);
    });
  session.connection = app.connect(
    ndJsonStream(Writable.toWeb(child.stdin) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout)),
  );
  await session.connection.agent.request('initialize', {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    clientInfo: { name: 'keel-test-editor', version: '0' },
  });
  return session;
}

/** The updates of one session, by their `sessionUpdate` kind. */
export function updatesOf(session: AcpSession, sessionId: string, kind?: string) {
  return session.updates
    .filter((n) => n.sessionId === sessionId)
    .map((n) => n.update)
    .filter((u) => kind === undefined || u.sessionUpdate === kind);
}

/** The text of a session's chunks of one kind, joined. */
export function chunkText(session: AcpSession, sessionId: string, kind: string): string {
  return updatesOf(session, sessionId, kind)
    .map((u) =>
      'content' in u && !Array.isArray(u.content) && u.content?.type === 'text' ? u.content.text : '',
    )
    .join('');
}
