import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import type { Policy, SessionEvent, ToolMode } from '../../main/common/events.js';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import type { TurnHost } from '../../main/core/turn/engine.js';
import { createProvider } from '../../main/providers/index.js';
import type { SandboxInfo } from '../../main/sandbox/box.js';
import { createToolRegistry, type ToolRegistryOptions } from '../../main/tools/registry.js';
import { makeTempDir, removeTempDir } from './cli.js';
import { ProviderServer, type ProviderServerOptions } from './providerServer.js';

/** A fresh temp folder holding a Keel home and a project folder, and a started scripted provider server. */
export type SessionFixture = {
  /** Real path of the temp folder (removed by closeSessionFixture). */
  dir: string;
  /** `<dir>/home`, not created: Keel makes it on first use. */
  home: string;
  /** `<dir>/project`, created empty. */
  project: string;
  server: ProviderServer;
};

/** Makes the temp folder (`prefix` names it), the empty project folder, and starts the provider server. */
export async function startSessionFixture(
  prefix: string,
  options: { server?: ProviderServerOptions } = {},
): Promise<SessionFixture> {
  const dir = fs.realpathSync(makeTempDir(prefix));
  const project = path.join(dir, 'project');
  fs.mkdirSync(project, { recursive: true });
  const server = await new ProviderServer(options.server).start();
  return { dir, home: path.join(dir, 'home'), project, server };
}

/** Stops the server and removes the temp folder. */
export async function closeSessionFixture(fixture: Pick<SessionFixture, 'dir' | 'server'>): Promise<void> {
  await fixture.server.close();
  removeTempDir(fixture.dir);
}

/** What a test file adds to its per-test session fixture (see `useSessionFixture`). */
export type SessionFixtureHooks = {
  server?: ProviderServerOptions;
  /** The beforeEach's timeout, for a `prepare` that builds a large project (vitest's hookTimeout otherwise). */
  prepareTimeoutMs?: number;
  /** Seeds the new fixture before each test: files in the project, a git repository, a mounted home. */
  prepare?: (fixture: SessionFixture) => void | Promise<void>;
  /** Runs after each test, before the server is stopped and the folder removed (closing logs, unmounting). */
  cleanup?: (fixture: SessionFixture) => void | Promise<void>;
};

/**
 * The session fixture of a test file, renewed for each test, as each such file had it written out: a fresh
 * one before every test (beforeEach, then `prepare`), closed after it (afterEach: `cleanup`, then
 * closeSessionFixture). Call it at the top level of the file. Its fields are the running test's: read them
 * inside a test, a hook or a helper a test calls, never when the file loads.
 */
export function useSessionFixture(prefix: string, hooks: SessionFixtureHooks = {}): SessionFixture {
  let current: SessionFixture | undefined;
  const now = (): SessionFixture => {
    if (current === undefined) throw new Error('the session fixture exists only while a test runs');
    return current;
  };
  beforeEach(async () => {
    current = await startSessionFixture(prefix, { server: hooks.server });
    await hooks.prepare?.(current);
  }, hooks.prepareTimeoutMs);
  afterEach(async () => {
    const fixture = current;
    current = undefined;
    if (fixture === undefined) return;
    await hooks.cleanup?.(fixture);
    await closeSessionFixture(fixture);
  });
  return {
    get dir() {
      return now().dir;
    },
    get home() {
      return now().home;
    },
    get project() {
      return now().project;
    },
    get server() {
      return now().server;
    },
  };
}

/**
 * A file's path on disk in the session's checkout of its project (its writes before they reach the folder):
 * a session made by `keel run` works on a checkout, its model's root, unless made with `--commit direct`.
 */
export function checkoutPath(home: string, sessionId: string, file: string): string {
  return path.join(home, 'sessions', sessionId, 'workspace', 'persistent', 'project', file);
}

/** The scripted model every fixture session is pinned to. */
export const SCRIPTED_MODEL = 'scripted-model';

/**
 * Arguments of `keel run` making a new session in `project` on the server's scripted OpenAI-compatible
 * model (context window 32 000 unless given); `extra` goes before the prompt.
 */
export function newSessionArgs(
  fixture: Pick<SessionFixture, 'project' | 'server'>,
  options: { policy: string; prompt: string; contextWindow?: number; extra?: readonly string[] },
): string[] {
  return [
    'run',
    '--project',
    fixture.project,
    '--provider',
    'openai-compatible',
    '--base-url',
    fixture.server.openaiBaseUrl,
    '--model',
    SCRIPTED_MODEL,
    '--context-window',
    String(options.contextWindow ?? 32_000),
    '--policy',
    options.policy,
    ...(options.extra ?? []),
    options.prompt,
  ];
}

/**
 * Creates a session log (open for writing; the caller closes it) in `project` on the server's scripted
 * model, over its OpenAI-compatible endpoint unless `provider` says `anthropic` (the caller's host then needs
 * some ANTHROPIC_API_KEY), context window 32 000 unless given; `systemPrompt` only when given (else Keel's
 * default); `networkAllow`, the hosts its commands may reach, only when given (else none).
 */
export function createScriptedSession(
  fixture: Pick<SessionFixture, 'home' | 'project' | 'server'>,
  options: {
    policy: Policy;
    toolMode: ToolMode;
    systemPrompt?: string;
    provider?: 'openai-compatible' | 'anthropic';
    contextWindow?: number;
    networkAllow?: string[];
  },
): SessionLog {
  const anthropic = options.provider === 'anthropic';
  return SessionLog.create(fixture.home, {
    projectFolder: fixture.project,
    provider: anthropic ? 'anthropic' : 'openai-compatible',
    model: SCRIPTED_MODEL,
    baseUrl: anthropic ? fixture.server.anthropicBaseUrl : fixture.server.openaiBaseUrl,
    contextWindow: options.contextWindow ?? 32_000,
    toolMode: options.toolMode,
    policy: options.policy,
    ...(options.systemPrompt !== undefined ? { systemPrompt: options.systemPrompt } : {}),
    ...(options.networkAllow !== undefined ? { networkAllow: options.networkAllow } : {}),
  });
}

/**
 * A turn host on a fixture session, without createTurnHost's layout: the pinned provider with no keys,
 * the tools of the session's mode (`registry` options added), tools acting in `workspace` with no
 * redaction and no protected globs, "You are Keel.", retries 1 ms apart; `extra` overrides any of it.
 */
export function scriptedTurnHost(
  log: SessionLog,
  options: { workspace: string; sandbox: SandboxInfo; registry?: ToolRegistryOptions },
  extra: Partial<TurnHost> = {},
): TurnHost {
  const created = log.read({ limit: 1 })[0];
  const mode = created?.kind === 'session_created' ? created.toolMode : 'write';
  return {
    log,
    createProvider: (pin) => createProvider(pin, {}, {}),
    registry: createToolRegistry(mode, options.registry),
    tools: {
      workspace: options.workspace,
      sessionDir: log.dir,
      artifactsDir: log.artifactsDir,
      redactor: { redact: (text) => text },
      sandbox: options.sandbox,
      protectedGlobs: [],
    },
    sandboxAvailable: options.sandbox.kind !== 'none',
    systemPrompt: 'You are Keel.',
    retry: { baseDelayMs: 1 },
    ...extra,
  };
}

/** Every event of a session, read through a log opened read-only (a running keel may hold it) and closed again. */
export function eventsOf(home: string, id: string): SessionEvent[] {
  const log = SessionLog.open(home, id, { write: false });
  try {
    return log.read();
  } finally {
    log.close();
  }
}

/** The id of the one session in `home`; fails the test when there is not exactly one. */
export function onlySessionId(home: string): string {
  const ids = fs.readdirSync(path.join(home, 'sessions'));
  expect(ids).toHaveLength(1);
  return ids[0] as string;
}

/** The events' kinds, in order. */
export const kinds = (events: readonly SessionEvent[]) => events.map((event) => event.kind);

/** Why the server rejected each request it rejected (an invalid tool sequence), in order; empty when none. */
export const rejected = (server: ProviderServer) =>
  server.requests.filter((request) => request.rejected !== undefined).map((request) => request.rejected);
