import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Policy } from '../../common/events.js';
import { assertValidSessionId } from '../log/sessionId.js';
import {
  LogCache,
  SessionExistsError,
  SessionLockedError,
  SessionLog,
  SessionNotFoundError,
} from '../log/sessionLog.js';
import { DEFAULT_SYSTEM_PROMPT } from '../prompts/system.js';
import { watchBackingFolders } from '../persistent/backingWatch.js';
import type { CommitReport, PersistentDirSpec } from '../persistent/types.js';
import { resolveContextWindow } from '../../providers/catalogue.js';
import type { SessionIndex, SessionStatus } from '../../store/sessionIndex.js';
import { openSessionIndex } from '../log/indexRebuild.js';
import { readSettings } from '../../store/settings.js';
import { createArtifactAccessor } from './artifacts.js';
import { commitDirs, discardDirs, recoverCommits, uncommittedDirs } from '../persistent/turnCheckouts.js';
import { hasCommitIntent } from '../persistent/commitIntent.js';
import { revertChanges, type RevertReport, type RevertTarget } from '../history/revert.js';
import { rewindSession, type RewindReport } from '../history/rewind.js';
import { createFileWriter } from './files.js';
import { readPersistentConfig, writePersistentConfig, type PersistentConfig } from '../persistent/config.js';
import { artifactsDir, eventsFile, makeSessionFolders, sessionDir } from '../paths.js';
import { withWritableSession } from './lock.js';
import { HarnessError } from './errors.js';
import { McpPool } from '../mcp/pool.js';
import { StatusFold, writeStatusPatch } from './status.js';
import { hasSessionEndHooks, sessionEnd } from './hookHost.js';
import type {
  EndSessionsOptions,
  FileWriter,
  GetOrCreateSessionOptions,
  Harness,
  HarnessArtifactAccessor,
  HarnessOptions,
  HarnessSession,
  HarnessSessionManager,
  HarnessSessionStatus,
  PersistentDirOption,
  TraceRef,
} from './types.js';
import type { UncommittedDir } from '../persistent/types.js';
import { stopSessionBackground } from '../../runner/background.js';
import { releaseIdleViews, stopAllViews, stopSessionViews } from '../persistent/viewHolder.js';
import { recordBackgroundOnExit, recordStoppedBackground } from './backgroundLog.js';

/** How long a session's end waits for this process's hold on it (a turn that would not stop) before giving up. */
const END_LEASE_WAIT_MS = 2_000;

/** How long getOrCreate waits for another process that is creating the same session. */
const CREATE_WAIT_MS = 10_000;

/** Everything a harness knows, shared by its sessions and by streamHarness (through `runtimeOf`). */
export type HarnessRuntime = {
  home: string;
  /** The options as given (extraBody is opaque to the harness: it is stored and handed back). */
  options: HarnessOptions<unknown>;
  /** Persistent Dirs of new sessions, from the options. */
  dirs: PersistentDirSpec[];
  indexStatus(id: string): SessionStatus | undefined;
  handle(id: string): LocalHarnessSession;
  /** Kept MCP servers by session (`keepMcpServers`); undefined: servers live per turn. */
  mcpPool?: McpPool;
  /** Projections of this harness's sessions kept between turns, so a turn extends instead of re-reading. */
  logCache: LogCache;
  /** Issue #30: sessions this harness (this process) has run a turn of: SessionStart `resume` runs once each. */
  started: Set<string>;
  /** Issue #30: SessionEnd runs under way (an exit waits for a close's end that is still running). */
  ending: Set<Promise<void>>;
};

const runtimes = new WeakMap<object, HarnessRuntime>();

/** The runtime behind a harness made by createHarness; throws for any other object. */
export function runtimeOf(harness: object): HarnessRuntime {
  const runtime = runtimes.get(harness);
  if (!runtime) throw new Error('streamHarness needs a harness made by createHarness()');
  return runtime;
}

/**
 * A harness over one Keel home: `sessions.getOrCreate` makes or finds a session (idempotent, also when two
 * processes race: the session folder's mkdir is the claim and the writer lease orders the rest), `get`
 * finds one without creating it. Handles are cached: the same id gives the same object.
 */
export function createHarness<TExtraBody = unknown>(
  options: HarnessOptions<TExtraBody>,
): Harness<TExtraBody> {
  fs.mkdirSync(options.home, { recursive: true });
  const home = fs.realpathSync(options.home);
  const dirs = dirSpecs(options.persistentDirs);
  let index: SessionIndex | undefined;
  const handles = new Map<string, LocalHarnessSession>();
  const keep = options.keepMcpServers;
  if (options.watchProjects) watchBackingFolders(true);
  const mcpPool = keep ? new McpPool(keep === true ? undefined : keep.idleMs) : undefined;
  const runtime: HarnessRuntime = {
    home,
    logCache: new LogCache(),
    started: new Set(),
    ending: new Set(),
    ...(mcpPool ? { mcpPool } : {}),
    options: options as HarnessOptions<unknown>,
    dirs,
    indexStatus: (id) => {
      index ??= openSessionIndex(home);
      return index.get(id)?.status;
    },
    handle: (id) => {
      let handle = handles.get(id);
      if (!handle) {
        handle = new LocalHarnessSession(runtime, id);
        handles.set(id, handle);
      }
      return handle;
    },
  };
  const creating = new Map<string, Promise<HarnessSession>>();
  const exists = (id: string) => {
    index ??= openSessionIndex(home);
    return index.get(id) !== undefined && fs.existsSync(eventsFile(sessionDir(home, id)));
  };
  const sessions: HarnessSessionManager<TExtraBody> = {
    get(id) {
      if (handles.has(id)) return Promise.resolve(handles.get(id));
      return Promise.resolve(exists(id) ? runtime.handle(id) : undefined);
    },
    getOrCreate(request) {
      try {
        assertValidSessionId(request.id);
      } catch (error) {
        return Promise.reject(error instanceof Error ? error : new Error(String(error)));
      }
      const known = handles.get(request.id);
      if (known) return Promise.resolve(known);
      let pending = creating.get(request.id);
      if (!pending) {
        pending = retryWhileBusy(async () => {
          if (!exists(request.id)) await createSession(runtime, request);
          return runtime.handle(request.id);
        }).finally(() => creating.delete(request.id));
        creating.set(request.id, pending);
      }
      return pending;
    },
  };
  const harness: Harness<TExtraBody> = {
    home,
    sessions,
    // A session's background commands (issue #32) end where its kept servers do: archived, deleted, shutdown;
    // their ends are recorded in the logs (killed with the session, or with Keel when every session stops).
    stopMcp: async (sessionId) => {
      await Promise.all([
        mcpPool?.stop(sessionId),
        sessionId === undefined
          ? stopSessionBackground(undefined, 'keel_ended')
          : stopSessionBackground(sessionDir(home, sessionId), 'session_stopped'),
      ]);
      await recordStoppedBackground(home, sessionId);
      // Issue #36: the session's views are let go with its processes, so another process may mount them.
      await (sessionId === undefined ? stopAllViews() : stopSessionViews(sessionDir(home, sessionId)));
    },
    endSessions: (end) => endSessions(runtime, end),
  };
  runtimes.set(harness, runtime);
  recordBackgroundOnExit(home);
  return harness;
}

/**
 * Harness.endSessions: each session's SessionEnd hooks under its writer lease, all sessions at once (an exit
 * waits one budget, not one per session). A session leaves `started` before its hooks run, so two calls (a
 * close, then the exit) never end it twice; the log says whether an end already ran (hookHost.ts).
 */
async function endSessions(runtime: HarnessRuntime, end: EndSessionsOptions): Promise<void> {
  const { reason, sessionId, onNotice } = end;
  const ids = (sessionId === undefined ? [...runtime.started] : [sessionId]).filter(
    (id) => runtime.started.has(id) || reason === 'clear',
  );
  const env = runtime.options.env ?? process.env;
  const { keys } = runtime.options;
  const endOne = async (id: string) => {
    await runEndHooks(id);
    // Issue #36: the session's views are let go here (their git indexes dropped first: turnCheckouts.ts's thinViews),
    // unless a turn, terminal or command of this process still uses them (then once idle).
    await releaseIdleViews(sessionDir(runtime.home, id)).catch(() => false);
  };
  const runEndHooks = async (id: string) => {
    // Most sessions have no SessionEnd hook: read-only, that costs no lease and says nothing when the log is gone.
    if (!hasSessionEndHooksFor(runtime.home, id, env)) return;
    // A turn of this process that did not stop holds the session: its end is given up, never waited on.
    let state: 'waiting' | 'running' | 'given up' = 'waiting';
    const ran = withWritableSession(
      runtime.home,
      id,
      async (log) => {
        if (state === 'given up') return;
        state = 'running';
        await sessionEnd(log, reason, {
          env,
          ...(keys ? { keys: typeof keys === 'function' ? keys() : keys } : {}),
          ...(onNotice ? { onNotice } : {}),
        });
      },
      { cache: runtime.logCache },
    );
    // Given up, its failure (if any) is no one's news.
    ran.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const lease = new Promise<void>((resolve) => (timer = setTimeout(resolve, END_LEASE_WAIT_MS)));
    try {
      await Promise.race([ran, lease.then(() => (state === 'running' ? ran : undefined))]);
      if (state === 'waiting') {
        state = 'given up';
        onNotice?.(`the SessionEnd hooks of session ${id} did not run: a turn still holds it`);
      }
    } catch (error) {
      onNotice?.(`the SessionEnd hooks of session ${id} did not run: ${(error as Error).message}`);
    } finally {
      clearTimeout(timer);
    }
  };
  for (const id of ids) {
    runtime.started.delete(id);
    const running: Promise<void> = endOne(id).finally(() => runtime.ending.delete(running));
    runtime.ending.add(running);
  }
  await Promise.all([...runtime.ending]);
}

/** Whether the session has a SessionEnd hook in effect; false when its log cannot be read (deleted, damaged). */
function hasSessionEndHooksFor(home: string, id: string, env: NodeJS.ProcessEnv): boolean {
  let log: SessionLog;
  try {
    log = SessionLog.open(home, id, { write: false });
  } catch {
    return false;
  }
  try {
    return hasSessionEndHooks(log, env);
  } catch {
    return false;
  } finally {
    log.close();
  }
}

/** Persistent Dirs as options name them, with their commit models (`project` defaults to auto, others to manual). */
function dirSpecs(options: Record<string, PersistentDirOption> | undefined): PersistentDirSpec[] {
  return Object.entries(options ?? {}).map(([name, option]): PersistentDirSpec => {
    const spec = typeof option === 'string' ? { path: option } : option;
    return {
      name,
      path: path.resolve(spec.path),
      commit: spec.commit ?? (name === 'project' ? 'auto' : 'manual'),
    };
  });
}

/** The policy the harness gives this session now (a function of its stored context, or fixed). */
export function policyFor(
  runtime: HarnessRuntime,
  id: string,
  extraBody: unknown,
  metadata: Record<string, unknown> | undefined,
): Policy | undefined {
  const { policy } = runtime.options;
  if (typeof policy === 'function') return policy({ sessionId: id, extraBody, metadata });
  return policy;
}

/**
 * Creates the session (log, folders, persistent.json), or, when another process won the race to create
 * it, waits until that process has finished (its lease released) and completes anything it left undone.
 */
async function createSession(
  runtime: HarnessRuntime,
  request: GetOrCreateSessionOptions<unknown>,
): Promise<void> {
  const { home } = runtime;
  const setup = request.create ?? {};
  const options = { ...runtime.options, ...setup };
  const dirs = setup.persistentDirs ? dirSpecs(setup.persistentDirs) : runtime.dirs;
  const settings = readSettings(home);
  const provider = options.model?.provider ?? settings.defaults.provider;
  const model = options.model?.model ?? settings.defaults.model;
  if (provider === undefined || model === undefined) {
    throw new Error(
      'createHarness needs a model ({ model: { provider, model } }) or defaults in settings.json',
    );
  }
  const baseUrl = options.model?.baseUrl ?? settings.providers[provider]?.baseUrl;
  const contextWindow = resolveContextWindow(
    model,
    options.model?.contextWindow ?? settings.contextWindows[model],
  );
  const policy =
    setup.policy ??
    policyFor(runtime, request.id, request.extraBody, request.metadata) ??
    settings.defaults.policy ??
    'ask';
  const project = dirs.find((dir) => dir.name === 'project');
  if (project && setup.projectFolder !== undefined) {
    throw new Error('a session works on a project folder directly or on a checkout of it, not both');
  }
  const projectFolder = project?.path ?? setup.projectFolder;
  const ownDirs = setup.projectFolder !== undefined ? undefined : dirs;
  for (const folder of [
    ...dirs.map((dir) => dir.path),
    ...(setup.projectFolder !== undefined ? [setup.projectFolder] : []),
  ])
    refuseFolderInHome(home, folder);
  let log: SessionLog;
  try {
    log = SessionLog.create(
      home,
      {
        sessionId: request.id,
        ...(request.title ? { title: request.title } : {}),
        projectFolder: projectFolder !== undefined ? fs.realpathSync(projectFolder) : '',
        provider,
        model,
        ...(baseUrl ? { baseUrl } : {}),
        contextWindow,
        ...(options.model?.reasoningEffort ? { reasoningEffort: options.model.reasoningEffort } : {}),
        ...(options.model?.local ? { local: options.model.local } : {}),
        toolMode: options.toolMode ?? (policy === 'read-only' ? 'read-only' : 'write'),
        policy,
        systemPrompt: options.systemPrompt ?? DEFAULT_SYSTEM_PROMPT,
        // The project is the model's root (the tools' paths, commands' folder): what a log made now means.
        pathRoot: 'project',
        ...(options.networkAllow?.length ? { networkAllow: options.networkAllow } : {}),
        ...(request.extraBody !== undefined ? { extraBody: request.extraBody } : {}),
        ...(request.metadata !== undefined ? { metadata: request.metadata } : {}),
      },
      // Before the index row: a session without its persistent.json would work on the folder directly.
      { files: (dataDir) => finishCreate(dataDir, ownDirs) },
    );
  } catch (error) {
    if (!(error instanceof SessionExistsError)) throw error;
    await completeRacedCreate(runtime, request.id, ownDirs);
    return;
  }
  try {
    const budget = setup.budget ?? settings.defaults.budget;
    if (budget && (budget.usd !== undefined || budget.tokens !== undefined)) {
      log.append(
        {
          kind: 'budget_set',
          ...(budget.usd === undefined ? {} : { usd: budget.usd }),
          ...(budget.tokens === undefined ? {} : { tokens: budget.tokens }),
          source: setup.budget ? 'created' : 'settings',
        },
        { expectedLastSeq: log.lastSeq() },
      );
    }
  } finally {
    log.close();
  }
}

/**
 * A session never works in the Keel home or a folder inside it, directly or on a checkout: its tools (or its
 * commit back) would reach every other session's log, outputs and checkouts, the MCP approvals and settings. A
 * folder that holds the home is fine: the home is hidden from its tools and commands.
 */
function refuseFolderInHome(home: string, folder: string): void {
  const real = (p: string) => {
    try {
      return fs.realpathSync(p);
    } catch {
      return path.resolve(p);
    }
  };
  const inside = path.relative(real(home), real(folder));
  if (inside === '' || (inside !== '..' && !inside.startsWith(`..${path.sep}`) && !path.isAbsolute(inside))) {
    throw new HarnessError(
      'invalid_input',
      `the project folder ${folder} is inside Keel's home (${home}), where every session's data lives; ` +
        'choose a project folder outside it',
    );
  }
}

/**
 * The parts of a new session beyond its log; done under the writer lease, so exactly one process does them.
 * A session working on its project folder directly (`dirs` undefined) gets no persistent.json.
 */
function finishCreate(dataDir: string, dirs: PersistentDirSpec[] | undefined): void {
  makeSessionFolders(dataDir);
  if (dirs && !readPersistentConfig(dataDir))
    writePersistentConfig(dataDir, { version: 1, dirs, readOnly: [] });
}

async function completeRacedCreate(
  runtime: HarnessRuntime,
  id: string,
  dirs: PersistentDirSpec[] | undefined,
): Promise<void> {
  const deadline = Date.now() + CREATE_WAIT_MS;
  for (;;) {
    try {
      const log = SessionLog.open(runtime.home, id, { write: true });
      try {
        finishCreate(log.dir, dirs);
      } finally {
        log.close();
      }
      return;
    } catch (error) {
      const transient = error instanceof SessionLockedError || error instanceof SessionNotFoundError;
      if (!transient || Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Retries `work` while SQLite reports the database busy beyond its busy timeout: two processes opening a
 * brand-new home at once can meet SQLITE_BUSY while one of them switches index.sqlite to WAL.
 */
async function retryWhileBusy<T>(work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + CREATE_WAIT_MS;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if ((code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') || Date.now() > deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 40));
  }
}

/** File name of a staged-message marker: the id's hash, so any id is a safe name. */
function markerName(messageId: string): string {
  return createHash('sha256').update(messageId).digest('hex').slice(0, 40);
}

/**
 * Keel's HarnessSession: a stable handle on `<home>/sessions/<id>`. It holds no lock and no open file;
 * every operation opens what it needs, so handles are cheap, survive restarts and can be shared.
 */
export class LocalHarnessSession implements HarnessSession {
  readonly dataDir: string;
  readonly files: FileWriter;
  readonly artifacts: HarnessArtifactAccessor;
  readonly trace: TraceRef;
  private readonly fold: StatusFold;

  constructor(
    private readonly runtime: HarnessRuntime,
    readonly id: string,
  ) {
    this.dataDir = sessionDir(runtime.home, id);
    this.files = createFileWriter(runtime.home, id);
    this.artifacts = createArtifactAccessor(artifactsDir(this.dataDir));
    this.trace = {
      sessionId: id,
      read: (options = {}) => {
        const log = SessionLog.open(runtime.home, id, { write: false });
        try {
          return Promise.resolve(log.readTrace(options));
        } finally {
          log.close();
        }
      },
    };
    this.fold = new StatusFold(runtime.home, id, this.dataDir, () => runtime.indexStatus(id));
  }

  /** Status derived from the log and the index, with the host's persisted patch over it. */
  status(): Promise<HarnessSessionStatus> {
    return Promise.resolve().then(() => this.fold.read());
  }

  /** Status read through a log the caller holds open (a turn's), so it costs no second open. */
  statusFrom(log: SessionLog): HarnessSessionStatus {
    return this.fold.read(log);
  }

  /** Persists a status patch; fields the log decides only stand until the next event. */
  setStatus(patch: Partial<HarnessSessionStatus>): Promise<void> {
    return Promise.resolve().then(() => {
      const log = SessionLog.open(this.runtime.home, this.id, { write: false });
      let lastSeq: number;
      try {
        lastSeq = log.lastSeq();
      } finally {
        log.close();
      }
      writeStatusPatch(this.dataDir, patch, lastSeq);
    });
  }

  /** Records that the host message is staged; idempotent and safe across processes (an exclusive marker file). */
  markMessageStaged(messageId: string): Promise<void> {
    return Promise.resolve().then(() => {
      const dir = path.join(this.dataDir, 'staged-messages');
      fs.mkdirSync(dir, { recursive: true });
      try {
        fs.writeFileSync(path.join(dir, markerName(messageId)), messageId, { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    });
  }

  /** True when markMessageStaged was called for this message. */
  isMessageStaged(messageId: string): boolean {
    return fs.existsSync(path.join(this.dataDir, 'staged-messages', markerName(messageId)));
  }

  /** Marks these Persistent Dirs read-only for the session (replacing the previous set); unknown names throw. */
  setReadOnlyPersistentDirs(harnessDirs: readonly string[]): void {
    const config = this.config();
    for (const name of harnessDirs) {
      if (!config.dirs.some((dir) => dir.name === name)) {
        throw new Error(
          `no Persistent Dir "${name}" in session ${this.id} (it has: ${config.dirs.map((d) => d.name).join(', ') || 'none'})`,
        );
      }
    }
    writePersistentConfig(this.dataDir, { ...config, readOnly: [...new Set(harnessDirs)] });
  }

  /** The Persistent Dirs that are read-only for this session. */
  getReadOnlyPersistentDirs(): readonly string[] {
    return readPersistentConfig(this.dataDir)?.readOnly ?? [];
  }

  /** The session's Persistent Dirs (empty for a session that works on its project folder directly). */
  persistentDirs(): PersistentDirSpec[] {
    return readPersistentConfig(this.dataDir)?.dirs ?? [];
  }

  /** Dirs with uncommitted changes (what a new turn would discard in manual dirs). */
  uncommitted(): Promise<UncommittedDir[]> {
    return uncommittedDirs(this.dataDir);
  }

  /**
   * Records the commits a crash cut off after their files reached the folder (commitIntent.ts); one notice
   * each. A turn does this itself when it starts; `keel resume` of a finished turn calls it.
   */
  async recoverCommits(): Promise<string[]> {
    // Without an intent there is nothing to do, and a session busy in another process is not disturbed.
    if (!hasCommitIntent(this.dataDir, readPersistentConfig(this.dataDir))) return [];
    return withWritableSession(this.runtime.home, this.id, (log) => recoverCommits(log));
  }

  /** Commits manual dirs now (all, or the named ones). */
  commit(dirs?: readonly string[]): Promise<CommitReport[]> {
    return withWritableSession(this.runtime.home, this.id, (log) => commitDirs(log, dirs ? { dirs } : {}));
  }

  /**
   * Reverts a turn's changes (or one recorded change) onto the folders as they are now: three-way per file,
   * nothing written on a conflict; recorded as a changes_reverted event (reverting that one restores).
   */
  revert(target: RevertTarget): Promise<RevertReport> {
    return withWritableSession(this.runtime.home, this.id, (log) => revertChanges(log, target));
  }

  /** Makes the conversation continue from `toSeq` (a `rewound` event); with `files`, the folders' later changes are reverted too. */
  rewind(options: { toSeq: number; files?: boolean }): Promise<RewindReport> {
    return withWritableSession(this.runtime.home, this.id, (log) => rewindSession(log, options));
  }

  /** Discards the uncommitted changes of manual dirs (all, or the named ones). */
  discard(dirs?: readonly string[]): Promise<string[]> {
    return withWritableSession(this.runtime.home, this.id, (log) => discardDirs(log, dirs ? { dirs } : {}));
  }

  private config(): PersistentConfig {
    const config = readPersistentConfig(this.dataDir);
    if (!config)
      throw new Error(`session ${this.id} works on its project folder directly; it has no Persistent Dirs`);
    return config;
  }
}
