import fs from 'node:fs';
import path from 'node:path';
import { beforeAll } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import type { McpServerConfig } from '../../main/common/mcp.js';
import type { SessionLog } from '../../main/core/log/sessionLog.js';
import { createTurnHost, type TurnHostOptions } from '../../main/core/harness/turnHost.js';
import { runTurn, type TurnHost } from '../../main/core/turn/engine.js';
import { detectSandbox, type SandboxInfo } from '../../main/sandbox/box.js';
import type { ToolRegistryOptions } from '../../main/tools/registry.js';
import {
  createScriptedSession,
  scriptedTurnHost,
  useSessionFixture,
  type SessionFixture,
  type SessionFixtureHooks,
} from './sessionFixture.js';

/*
 * The turn-host fixture that the turn engine's and the MCP tests each wrote for themselves: a session fixture,
 * the machine's sandbox, sessions on the scripted server and hosts over them, every log and host a test opened
 * closed after it.
 */

/** What `createScriptedSession` takes. */
export type ScriptedSessionOptions = Parameters<typeof createScriptedSession>[1];

/** A session fixture (useSessionFixture) with the sessions and turn hosts a test makes on it. */
export type TurnHostFixture = SessionFixture & {
  /** The machine's sandbox (detectSandbox, in beforeAll): read it inside a test or a hook. */
  readonly sandbox: SandboxInfo;
  /** The logs the running test opened (createSession, track), oldest first. */
  readonly logs: readonly SessionLog[];
  /** A session on the server's scripted model (createScriptedSession), closed after the test. */
  createSession: (options: ScriptedSessionOptions) => SessionLog;
  /** Closes `log` after the test (a log made another way: an import, extra options); returns it. */
  track: (log: SessionLog) => SessionLog;
  /** Closes a tracked log now (to reopen it); it leaves `logs`. */
  close: (log: SessionLog) => void;
  /** A turn host without createTurnHost's layout (scriptedTurnHost) acting in the project, in the sandbox. */
  hostFor: (log: SessionLog, extra?: Partial<TurnHost>, registry?: ToolRegistryOptions) => TurnHost;
  /** Keel's own turn host (createTurnHost: layout, MCP servers, redaction), disposed after the test. */
  keelHost: (log: SessionLog, options?: TurnHostOptions) => Promise<TurnHost>;
  /** Disposes a host made by `keelHost` now (its MCP servers stop); it is not disposed again. */
  dispose: (host: TurnHost) => Promise<void>;
};

/**
 * The turn-host fixture of a test file, renewed for each test like `useSessionFixture` (same `prefix` and
 * hooks). After each test, `hooks.cleanup` runs first (it may still read `logs`), then every host made by
 * `keelHost` is disposed and every tracked log closed. Call it at the top level of the file.
 */
export function useTurnHostFixture(prefix: string, hooks: SessionFixtureHooks = {}): TurnHostFixture {
  const logs: SessionLog[] = [];
  const hosts: TurnHost[] = [];
  let sandbox: SandboxInfo | undefined;
  beforeAll(async () => {
    sandbox = await detectSandbox();
  });
  const fixture = useSessionFixture(prefix, {
    ...hooks,
    cleanup: async (current) => {
      try {
        await hooks.cleanup?.(current);
      } finally {
        for (const host of hosts.splice(0)) await host.dispose?.();
        for (const log of logs.splice(0)) log.close();
      }
    },
  });
  const detected = (): SandboxInfo => {
    if (sandbox === undefined) throw new Error('the sandbox is detected in beforeAll: read it inside a test');
    return sandbox;
  };
  const track = (log: SessionLog): SessionLog => {
    logs.push(log);
    return log;
  };
  return {
    get dir() {
      return fixture.dir;
    },
    get home() {
      return fixture.home;
    },
    get project() {
      return fixture.project;
    },
    get server() {
      return fixture.server;
    },
    get sandbox() {
      return detected();
    },
    logs,
    createSession: (options) => track(createScriptedSession(fixture, options)),
    track,
    close: (log) => {
      log.close();
      const at = logs.indexOf(log);
      if (at >= 0) logs.splice(at, 1);
    },
    hostFor: (log, extra = {}, registry) =>
      scriptedTurnHost(
        log,
        { workspace: fixture.project, sandbox: detected(), ...(registry ? { registry } : {}) },
        extra,
      ),
    keelHost: async (log, options = {}) => {
      const host = await createTurnHost(log, options);
      hosts.push(host);
      return host;
    },
    dispose: async (host) => {
      const at = hosts.indexOf(host);
      if (at >= 0) hosts.splice(at, 1);
      await host.dispose?.();
    },
  };
}

/**
 * Writes `home`'s settings.json with these MCP servers (and `disabledTools` when given), making the home;
 * replaces any settings there.
 */
export function writeMcpSettings(
  home: string,
  servers: Record<string, Partial<McpServerConfig>>,
  disabledTools?: string[],
): void {
  fs.mkdirSync(home, { recursive: true });
  const mcp = disabledTools === undefined ? { servers } : { servers, disabledTools };
  fs.writeFileSync(path.join(home, 'settings.json'), JSON.stringify({ mcp }));
}

/**
 * One turn of a new full-auto session on the fixture's scripted model, through Keel's own turn host (`env`),
 * in which the model calls `call.name` with `call.args` once and then answers "ok"; returns the tool_result.
 * The session's log is pushed onto `opened` for the caller to close.
 */
export async function toolResultOfOneCall(
  fixture: Pick<SessionFixture, 'home' | 'project' | 'server'>,
  call: { id: string; name: string; args: Record<string, unknown> },
  env: NodeJS.ProcessEnv,
  opened: SessionLog[],
): Promise<EventOf<'tool_result'>> {
  const log = createScriptedSession(fixture, { policy: 'full-auto', toolMode: 'write' });
  opened.push(log);
  fixture.server.enqueue(
    { kind: 'reply', toolCalls: [{ id: call.id, name: call.name, arguments: call.args }] },
    { kind: 'reply', text: 'ok' },
  );
  const host = await createTurnHost(log, { env });
  try {
    await runTurn(host, { prompt: 'go' });
  } finally {
    await host.dispose?.();
  }
  const result = log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
  if (!result) throw new Error('no tool result');
  return result;
}
