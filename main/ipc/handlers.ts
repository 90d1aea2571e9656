import fs from 'node:fs';
import path from 'node:path';
import { recordDecision, recordRevocation } from '../core/approvals/decide.js';
import { listGrants } from '../core/approvals/grants.js';
import { pendingApprovals } from '../core/approvals/state.js';
import type { EventOf, SessionEvent } from '../common/events.js';
import { newSessionId } from '../core/log/sessionId.js';
import { SessionLog } from '../core/log/sessionLog.js';
import {
  inspectCompactions,
  inspectSessionCompactions,
  type CompactionRecord,
} from '../core/compaction/inspect.js';
import { commitDirs, discardDirs, openCheckout, persistentConfigOf } from '../core/sessions/checkouts.js';
import { readPersistentConfig } from '../core/sessions/layout.js';
import { loadSessionState } from '../core/turn/loadState.js';
import { readTraceSummary } from '../core/trace/read.js';
import { foldSession, needsModel, unansweredCalls } from '../core/turn/state.js';
import { systemClock, type Clock } from '../common/clock.js';
import {
  catalogueView,
  chooseModel,
  ModelChoiceError,
  refreshServedModels,
  summarizeServed,
  type ModelRequest,
} from '../core/models/index.js';
import type { ModelPin } from '../common/events.js';
import { createProvider, ProviderError, toProviderError } from '../providers/index.js';
import type { ProviderKeys } from '../providers/index.js';
import { detectSandbox } from '../sandbox/box.js';
import { isLeaseStale, SessionIndex, type SessionSummary as IndexSummary } from '../store/sessionIndex.js';
import { readSettings, writeSettings } from '../store/settings.js';
import {
  channels,
  isChannelName,
  type AppCommand,
  type ChannelArgs,
  type ChannelName,
  type ChannelOutput,
  type CompactionSummary,
  type IpcResult,
  type ProjectGroup,
  type SessionSummary,
  type SettingsView,
} from './contract.js';
import { previewApproval } from './approvalPreview.js';
import { readArtifactPage } from './artifactPages.js';
import { comparePayloads } from './compactionPayload.js';
import { describeInvalidInput, IpcFailure, toIpcError } from './errors.js';
import { runCompaction } from './compactNow.js';
import { createHub, type Hub } from './hub.js';
import { environmentKeyStore, keyPresence, type KeyStore } from './keys.js';
import { OutputFlows } from './outputFlows.js';
import { commitHistory, newTurnWarning, readFileVersions, reviewPersistentDirs } from './persistentReview.js';
import { readRecentProjects, rememberProject } from './recentProjects.js';
import { readSessionBox } from './sessionBox.js';
import { TerminalManager } from './terminals.js';
import { TurnManager } from './turns.js';

/** A local OpenAI-compatible server `providers.detectLocal` looks for. */
export type LocalServerCandidate = { name: string; baseUrl: string };

/** The servers first run offers when they answer: Ollama and LM Studio on their default ports. */
export const LOCAL_SERVERS: readonly LocalServerCandidate[] = [
  { name: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1' },
  { name: 'LM Studio', baseUrl: 'http://127.0.0.1:1234/v1' },
];

/** What the handler table is built over: a home, and what differs between the app and `keel serve`. */
export type HandlerOptions = {
  /** The Keel home (index.sqlite, sessions/, settings.json). */
  home: string;
  mode: 'electron' | 'serve';
  /** The app version app.info reports. */
  version: string;
  /** Providers' key fallback and commands' allowlisted variables. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Where API keys live. Default: the environment (read-only). */
  keyStore?: KeyStore;
  /** The native folder picker (Electron); without it projects.openFolder needs a path. */
  pickFolder?: (startFolder: string | undefined) => Promise<string | null>;
  /** Model requests per turn (the turn's budget). */
  maxSteps?: number;
  /** Where providers.detectLocal looks (tests point it at a scripted server). */
  localServers?: readonly LocalServerCandidate[];
  /** Drains the shell's commands that arrived before the UI listened (Electron); none in `keel serve`. */
  takeLaunchCommands?: () => AppCommand[];
  /** Called when a project folder was opened or used (Electron adds it to the OS recent list). */
  onProjectUsed?: (folder: string) => void;
  /** The clock model lifecycle is judged by (tests pin their day). Default: the system's. */
  clock?: Clock;
};

/**
 * Who calls: the transport's connection (a `keel serve` WebSocket, the Electron window). Flow control and
 * interactive terminals belong to a connection and are released when it goes (`Handlers.disconnect`).
 */
export type Caller = { client: string };

/** The connection of callers that name none (the Electron window, tests). */
export const DEFAULT_CLIENT = 'app';

/** The handler of every channel: validated arguments in, a contract value out (validated by `invoke`). */
export type HandlerTable = {
  [C in ChannelName]: (args: ChannelArgs<C>, caller: Caller) => Promise<ChannelOutput<C>> | ChannelOutput<C>;
};

/** The handler table mounted by a transport. */
export type Handlers = {
  /** Pushed events for every subscriber of this table. */
  readonly hub: Hub;
  /**
   * Validates input, runs the channel, validates output. Never throws: every failure is `{ ok: false, error }`.
   * `client` names the caller's connection (default DEFAULT_CLIENT).
   */
  invoke(channel: unknown, input: unknown, client?: string): Promise<IpcResult<unknown>>;
  /** A connection went away: its command-output flows are released and its terminals killed. */
  disconnect(client: string): Promise<void>;
  /** Sessions with a turn running in this process. */
  runningSessions(): string[];
  /** Stops running turns (interruptions recorded) and terminals, releases their leases and closes the index. Idempotent. */
  close(): Promise<void>;
};

const PROVIDER_TEST_TIMEOUT_MS = 20_000;
const LOCAL_PROBE_TIMEOUT_MS = 800;

/** Creates the handler table over one home. Nothing holds a session lease except a running turn or one write. */
export function createHandlers(options: HandlerOptions): Handlers {
  const { home } = options;
  const env = options.env ?? process.env;
  const keyStore = options.keyStore ?? environmentKeyStore();
  const clock = options.clock ?? systemClock;
  const hub = createHub();
  // Reviewing a checkout runs git on its index (update-index): two at once collide on index.lock, so the
  // reads of one session run one after another.
  const reviewQueues = new Map<string, Promise<unknown>>();
  const serialReview = <T>(sessionId: string, read: () => Promise<T>): Promise<T> => {
    const previous = reviewQueues.get(sessionId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(read);
    reviewQueues.set(sessionId, next);
    void next
      .finally(() => {
        if (reviewQueues.get(sessionId) === next) reviewQueues.delete(sessionId);
      })
      .catch(() => undefined);
    return next;
  };
  fs.mkdirSync(home, { recursive: true });
  const index = SessionIndex.open(home);
  // The lookup runs only once a command streams, long after `turns` exists.
  const outputFlows: OutputFlows = new OutputFlows({
    lookup: (sessionId, toolCallId) => turns.runningCommandOf(sessionId, toolCallId),
  });
  const turns = new TurnManager({
    home,
    hub,
    index,
    env,
    keys: () => keyStore.read(),
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    beforeToolOutput: (sessionId, toolCallId) => outputFlows.beforeOutput(sessionId, toolCallId),
    afterEvent: (sessionId, event) => {
      if (event.kind === 'tool_result') outputFlows.commandEnded(sessionId, event.toolCallId);
    },
  });
  hub.subscribe((push) => {
    if (push.topic === 'session.status' && !push.payload.running)
      outputFlows.sessionEnded(push.payload.sessionId);
  });
  const terminals = new TerminalManager({
    home,
    hub,
    env,
    keys: () => keyStore.read(),
    ensureCheckouts: async (sessionId) => {
      // A running turn made them already (prepareTurn); an idle session gets them under its lease.
      if (turns.isRunning(sessionId)) return;
      await turns.exclusive(sessionId, async (log) => {
        for (const dir of persistentConfigOf(log)?.dirs ?? []) await openCheckout(log, dir);
      });
    },
  });
  let closed = false;

  const folderExists = (() => {
    return (folder: string) => {
      try {
        return fs.statSync(folder).isDirectory();
      } catch {
        return false;
      }
    };
  })();

  const toSummary = (row: IndexSummary, exists = folderExists(row.projectFolder)): SessionSummary => ({
    ...row,
    projectExists: exists,
  });

  const summaryOf = (sessionId: string): SessionSummary => {
    const row = index.get(sessionId);
    if (!row) throw new IpcFailure('not_found', `no session ${sessionId}`);
    return toSummary(row);
  };

  const readLog = <T>(sessionId: string, use: (log: SessionLog) => T): T => {
    const log = SessionLog.open(home, sessionId, { write: false });
    try {
      return use(log);
    } finally {
      log.close();
    }
  };

  const useProject = (folder: string) => {
    rememberProject(home, folder);
    options.onProjectUsed?.(folder);
  };

  // The core's one model choice; only its wording of an unknown window is the app's own.
  const choose = async (request: ModelRequest, previous?: ModelPin) => {
    try {
      return await chooseModel(request, {
        home,
        clock,
        keys: keyStore.read(),
        env,
        ...(previous ? { previous } : {}),
      });
    } catch (error) {
      if (!(error instanceof ModelChoiceError)) throw error;
      throw new IpcFailure(
        'invalid_input',
        error.code === 'unknown_window'
          ? `Keel does not know the context window of "${request.model}": enter it (in tokens) for this model`
          : error.message,
      );
    }
  };
  const modelRequest = (args: {
    provider: ModelRequest['provider'];
    model: string;
    baseUrl?: string | undefined;
    contextWindow?: number | undefined;
  }): ModelRequest => ({
    provider: args.provider,
    model: args.model,
    ...(args.baseUrl !== undefined ? { baseUrl: args.baseUrl } : {}),
    ...(args.contextWindow !== undefined ? { contextWindow: args.contextWindow } : {}),
  });

  const settingsView = (): SettingsView => ({
    settings: readSettings(home),
    keys: keyPresence(keyStore, env),
    keyStorage: keyStore.kind,
  });

  const heldElsewhere = (sessionId: string): boolean => {
    const holder = index.leaseHolder(sessionId);
    if (!holder || isLeaseStale(holder)) return false;
    return !(holder.pid === process.pid && turns.isRunning(sessionId));
  };

  // The core's approval front door; a refusal becomes the channel's error as it is.
  const decide = (args: ChannelArgs<'approvals.decide'>) =>
    turns.appendWhileIdle(args.sessionId, (log) => {
      const result = recordDecision(log, {
        requestSeq: args.requestSeq,
        ...(args.decision === 'grant'
          ? { decision: 'grant' as const, scope: args.scope }
          : { decision: 'deny' as const, ...(args.reason ? { reason: args.reason } : {}) }),
      });
      if (!result.ok) throw new IpcFailure(result.code, result.message);
      return {
        events: [result.recorded],
        value: { recorded: result.recorded, stillPending: result.stillPending },
      };
    });

  const revoke = (args: ChannelArgs<'grants.revoke'>) =>
    turns.appendWhileIdle(args.sessionId, (log) => {
      const result = recordRevocation(log, args.grantSeq, args.reason);
      if (!result.ok) throw new IpcFailure(result.code, result.message);
      return { events: [result.recorded], value: { event: result.recorded, grant: result.grant } };
    });

  const table: HandlerTable = {
    'sessions.list': (args) => {
      const rows = index.list({
        limit: args.limit + 1,
        offset: args.offset,
        ...(args.search !== undefined && args.search.trim() !== '' ? { search: args.search } : {}),
        ...(args.projectFolder !== undefined ? { projectFolder: args.projectFolder } : {}),
        includeArchived: args.includeArchived,
      });
      const page = rows.slice(0, args.limit);
      const exists = new Map<string, boolean>();
      const groups = new Map<string, ProjectGroup>();
      const sessions = page.map((row) => {
        let present = exists.get(row.projectFolder);
        if (present === undefined) {
          present = folderExists(row.projectFolder);
          exists.set(row.projectFolder, present);
        }
        const group = groups.get(row.projectFolder);
        if (group) group.sessionIds.push(row.id);
        else
          groups.set(row.projectFolder, {
            folder: row.projectFolder,
            exists: present,
            lastActivity: row.updatedAt,
            sessionIds: [row.id],
          });
        return toSummary(row, present);
      });
      return { sessions, projects: [...groups.values()], hasMore: rows.length > args.limit };
    },

    'sessions.create': async (args) => {
      const folder = path.resolve(args.projectFolder);
      if (!folderExists(folder)) {
        throw new IpcFailure('not_found', `the project folder ${folder} does not exist or is not a folder`);
      }
      // A session is pinned to its model: the provider's word on it decides, the catalogue only warns.
      const { pin, warning } = await choose(modelRequest(args));
      const real = fs.realpathSync(folder);
      // The app is a host of the session API: its sessions are made as a library user's are.
      const session = await turns.harness.sessions.getOrCreate({
        id: newSessionId(),
        ...(args.title ? { title: args.title } : {}),
        create: {
          model: pin,
          ...(args.checkout === 'direct'
            ? { projectFolder: real }
            : { persistentDirs: { project: { path: real, commit: args.checkout } } }),
          policy: args.policy,
          toolMode: args.policy === 'read-only' ? 'read-only' : args.toolMode,
          networkAllow: args.networkAllow,
        },
      });
      const id = session.id;
      const created = readLog(id, (log) => log.read({ fromSeq: 1, limit: 1 })[0]);
      useProject(real);
      if (created) hub.publish('event.appended', { sessionId: id, event: created });
      hub.publish('sessions.changed', { sessionId: id, change: 'created' });
      return { session: summaryOf(id), ...(warning ? { warning } : {}) };
    },

    'sessions.open': (args) =>
      readLog(args.sessionId, (log) => {
        // Index lookups, not a read of the whole log: opening a 10k-event session stays cheap.
        const state = loadSessionState(log);
        const session = summaryOf(args.sessionId);
        const pending = pendingApprovals(
          log.readKinds(['approval_request', 'approval_granted', 'approval_denied'], { validate: false }),
        );
        const compactedAt = log.lastSeqOfKind('compaction') ?? 0;
        const usage =
          state.lastUsage && (state.lastUsageSeq ?? 0) > compactedAt ? state.lastUsage : undefined;
        const threshold = readSettings(home).compaction.threshold;
        const created = log.read({ fromSeq: 1, limit: 1 })[0] as EventOf<'session_created'>;
        const running = turns.isRunning(args.sessionId);
        return {
          session,
          pin: state.pin,
          policy: state.policy,
          toolMode: state.toolMode,
          networkAllow: created.networkAllow ?? [],
          persistentDirs: (() => {
            const config = readPersistentConfig(log.dir);
            return (config?.dirs ?? []).map((dir) => ({
              dir: dir.name,
              commit: dir.commit,
              readOnly: config?.readOnly.includes(dir.name) ?? false,
            }));
          })(),
          running,
          readOnly: !session.projectExists || heldElsewhere(args.sessionId),
          canResume:
            !running && pending.length === 0 && (needsModel(state) || unansweredCalls(state).length > 0),
          pendingApprovals: pending,
          context: {
            usedTokens: usage
              ? usage.inputTokens +
                usage.outputTokens +
                (usage.cacheReadTokens ?? 0) +
                (usage.cacheWriteTokens ?? 0)
              : null,
            window: state.pin.contextWindow,
            compactAt: threshold > 0 ? Math.floor(threshold * state.pin.contextWindow) : null,
          },
        };
      }),

    'sessions.rename': (args) => {
      turns.assertIdle(args.sessionId);
      // A rename is an event, so the title survives an index rebuild and shows in the session's history.
      const log = SessionLog.open(home, args.sessionId, { write: true });
      try {
        log.append({ kind: 'session_renamed', title: args.title });
      } finally {
        log.close();
      }
      hub.publish('sessions.changed', { sessionId: args.sessionId, change: 'renamed' });
      return { session: summaryOf(args.sessionId) };
    },

    'sessions.setModel': async (args) => {
      turns.assertIdle(args.sessionId);
      const before = readLog(args.sessionId, (log) => ({
        pin: loadSessionState(log).pin,
        lastSeq: log.lastSeq(),
      }));
      const { pin, warning } = await choose(modelRequest(args), before.pin);
      return turns.appendWhileIdle(args.sessionId, (log) => {
        // The provider was asked meanwhile: a turn or another switch in between makes this one stale.
        const appended = log.append({ kind: 'model_changed', ...pin }, { expectedLastSeq: before.lastSeq });
        if (!appended.ok) throw new IpcFailure('invalid_state', 'the session changed meanwhile: try again');
        return {
          events: appended.events,
          value: { pin, previous: before.pin, ...(warning ? { warning } : {}) },
        };
      });
    },

    'sessions.archive': (args) => {
      if (!index.setArchived(args.sessionId, args.archived)) {
        throw new IpcFailure('not_found', `no session ${args.sessionId}`);
      }
      hub.publish('sessions.changed', { sessionId: args.sessionId, change: 'archived' });
      return { session: summaryOf(args.sessionId) };
    },

    'sessions.delete': async (args) => {
      turns.assertIdle(args.sessionId);
      // Its shells run inside the session's folder: they go first.
      await terminals.killSession(args.sessionId);
      // Taking the lease proves no other process is writing; the folder goes once it is released.
      const log = SessionLog.open(home, args.sessionId, { write: true });
      const dir = log.dir;
      log.close();
      index.removeSession(args.sessionId);
      fs.rmSync(dir, { recursive: true, force: true });
      hub.publish('sessions.changed', { sessionId: args.sessionId, change: 'deleted' });
      return { deleted: true as const };
    },

    'events.page': (args) =>
      readLog(args.sessionId, (log) => {
        const lastSeq = log.lastSeq();
        let fromSeq: number;
        let toSeq: number;
        if (args.fromSeq !== undefined) {
          fromSeq = args.fromSeq;
          toSeq = Math.min(args.toSeq ?? lastSeq, fromSeq + args.limit - 1);
        } else {
          toSeq = Math.min(args.toSeq ?? lastSeq, (args.beforeSeq ?? lastSeq + 1) - 1);
          fromSeq = Math.max(1, toSeq - args.limit + 1);
        }
        const events = toSeq >= fromSeq ? log.read({ fromSeq, toSeq, limit: args.limit }) : [];
        const first = events[0]?.seq ?? fromSeq;
        const last = events[events.length - 1]?.seq ?? toSeq;
        return { events, lastSeq, hasBefore: first > 1 && lastSeq > 0, hasAfter: last < lastSeq };
      }),

    'turns.send': async (args) => ({
      turnId: await turns.start(args.sessionId, { prompt: args.prompt, discardChanges: args.discardChanges }),
    }),

    'turns.stop': async (args) => {
      if (!index.get(args.sessionId)) throw new IpcFailure('not_found', `no session ${args.sessionId}`);
      return { stopped: await turns.stop(args.sessionId) };
    },

    'turns.resume': async (args) => {
      turns.assertIdle(args.sessionId);
      readLog(args.sessionId, (log) => {
        const events = log.read();
        const pending = pendingApprovals(events);
        if (pending.length > 0) {
          throw new IpcFailure(
            'invalid_state',
            `the turn waits on ${pending.length === 1 ? 'an approval' : `${pending.length} approvals`}: decide first`,
          );
        }
        const state = foldSession(events);
        if (!needsModel(state) && unansweredCalls(state).length === 0) {
          throw new IpcFailure('invalid_state', 'nothing to resume: the last turn completed');
        }
      });
      return { turnId: await turns.start(args.sessionId, {}) };
    },

    'approvals.list': (args) => readLog(args.sessionId, (log) => ({ pending: pendingApprovals(log.read()) })),

    'approvals.decide': async (args) => {
      const { recorded, stillPending } = decide(args);
      if (!args.resume || stillPending) return { event: recorded };
      return { event: recorded, turnId: await turns.start(args.sessionId, {}) };
    },

    'approvals.preview': (args) => {
      const log = SessionLog.open(home, args.sessionId, { write: false });
      const run = async () => {
        const events = log.read();
        const box = await readSessionBox(log, { env, keys: keyStore.read() });
        return previewApproval(events, args.requestSeq, box, {
          dir: log.dir,
          artifactsDir: log.artifactsDir,
        });
      };
      return run().finally(() => log.close());
    },

    'grants.list': (args) =>
      readLog(args.sessionId, (log) => ({
        grants: listGrants(log.read()).filter((grant) => args.includeRevoked || !grant.revoked),
      })),

    'grants.revoke': (args) => revoke(args),

    'trace.summary': (args) => ({
      summary: readTraceSummary(home, args.sessionId, {
        now: new Date(),
        ...(args.maxDepth !== undefined ? { maxDepth: args.maxDepth } : {}),
      }),
    }),

    'commands.kill': (args) => {
      const command = turns.runningCommandOf(args.sessionId, args.toolCallId);
      if (command) {
        command.abort();
        return { killed: true as const };
      }
      return readLog(args.sessionId, (log) => {
        throw whyNotRunning(log.read(), args.toolCallId, turns.isRunning(args.sessionId));
      });
    },

    'artifacts.read': (args) => {
      const artifactsDir = readLog(args.sessionId, (log) => log.artifactsDir);
      return readArtifactPage(artifactsDir, args.handle, args.offset, args.maxBytes);
    },

    'tool.watch': (args, caller) => {
      summaryOf(args.sessionId);
      outputFlows.watch(caller.client, args.sessionId);
      return { watching: true as const };
    },

    'tool.unwatch': (args, caller) => {
      outputFlows.unwatch(caller.client, args.sessionId);
      return { watching: false as const };
    },

    'tool.outputAck': (args, caller) => ({
      unackedChars: outputFlows.ack(caller.client, args.sessionId, args.toolCallId, args.chars),
    }),

    'terminal.open': (args, caller) => terminals.openTerminal(caller.client, args.sessionId, args),

    'terminal.write': (args) => {
      terminals.write(args.terminalId, args.data);
      return {};
    },

    'terminal.resize': (args) => {
      terminals.resize(args.terminalId, args.cols, args.rows);
      return {};
    },

    'terminal.ack': (args) => {
      terminals.ack(args.terminalId, args.chars);
      return {};
    },

    'terminal.kill': (args) => terminals.kill(args.terminalId),

    'terminal.list': (args, caller) => ({ terminals: terminals.list(caller.client, args.sessionId) }),

    'compactions.list': (args) =>
      readLog(args.sessionId, (log) => ({
        compactions: inspectSessionCompactions(log).map(toCompactionSummary),
      })),

    'compactions.inspect': (args) =>
      readLog(args.sessionId, (log) => {
        const events = log.read();
        const event = events.find((candidate) => candidate.seq === args.seq);
        const record = inspectCompactions(events).find((candidate) => candidate.seq === args.seq);
        if (event?.kind !== 'compaction' || !record) {
          throw new IpcFailure(
            'not_found',
            `event ${args.seq} of session ${args.sessionId} is not a compaction`,
          );
        }
        return {
          compaction: event,
          summary: toCompactionSummary(record),
          replacedCount: record.replaced.events.length,
        };
      }),

    'compactions.payload': (args) => readLog(args.sessionId, (log) => comparePayloads(log, args.seq)),

    'compactions.run': (args) =>
      turns.exclusive(args.sessionId, (log, onEvent) =>
        runCompaction(log, {
          compaction: readSettings(home).compaction,
          keys: keyStore.read(),
          env,
          onEvent,
          ...(args.rerun !== undefined ? { rerun: args.rerun } : {}),
        }),
      ),

    'persistent.diff': async (args) => {
      const dir = readLog(args.sessionId, (log) => log.dir);
      const reviews = await serialReview(args.sessionId, () => reviewPersistentDirs(dir, args.dir));
      return {
        hasCheckouts: reviews !== undefined,
        dirs: reviews ?? [],
        newTurnWarning: newTurnWarning(reviews ?? []),
      };
    },

    'persistent.file': async (args) => {
      const { dir, artifactsDir, events } = readLog(args.sessionId, (log) => ({
        dir: log.dir,
        artifactsDir: log.artifactsDir,
        events: args.commitSeq === undefined ? [] : log.read(),
      }));
      return serialReview(args.sessionId, () => readFileVersions(dir, artifactsDir, events, args));
    },

    'persistent.history': (args) => readLog(args.sessionId, (log) => ({ turns: commitHistory(log.read()) })),

    'persistent.apply': (args) =>
      turns.exclusive(args.sessionId, async (log, onEvent) => {
        assertHasCheckouts(log);
        const reports = await commitDirs(log, { onEvent, ...(args.dirs ? { dirs: args.dirs } : {}) });
        return {
          reports: reports.map((report) =>
            report.status === 'committed'
              ? {
                  ...report,
                  files: report.files.map((file) => ({ path: file.path, merged: file.merged === true })),
                }
              : report,
          ),
        };
      }),

    'persistent.discard': (args) =>
      turns.exclusive(args.sessionId, async (log) => {
        assertHasCheckouts(log);
        return { discarded: await discardDirs(log, args.dirs ? { dirs: args.dirs } : {}) };
      }),

    'settings.get': () => settingsView(),

    'settings.set': (args) => {
      if (args.keys && Object.keys(args.keys).length > 0) {
        if (!keyStore.write) {
          throw new IpcFailure(
            'not_available',
            'keel serve reads API keys from the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, KEEL_OPENAI_COMPATIBLE_API_KEY); set them there and restart',
          );
        }
        keyStore.write(args.keys);
      }
      // The model corrections are kept unless the caller sends its own (older UIs do not know them).
      if (args.settings)
        writeSettings(home, { ...args.settings, models: args.settings.models ?? readSettings(home).models });
      return settingsView();
    },

    'settings.testProvider': async (args) => {
      const settings = readSettings(home);
      const baseUrl = args.baseUrl ?? settings.providers[args.provider]?.baseUrl;
      const keyName = args.provider === 'openai-compatible' ? 'openaiCompatible' : args.provider;
      const keys: ProviderKeys = args.apiKey ? { [keyName]: args.apiKey } : keyStore.read();
      const started = performance.now();
      const signal = AbortSignal.timeout(PROVIDER_TEST_TIMEOUT_MS);
      try {
        const provider = createProvider(
          { provider: args.provider, ...(baseUrl ? { baseUrl } : {}) },
          keys,
          env,
        );
        for await (const event of provider.stream({
          payload: { messages: [{ role: 'user', content: 'Reply with the word OK.' }] },
          tools: [],
          model: args.model,
          maxOutputTokens: 16,
          signal,
        })) {
          if (event.type === 'text' || event.type === 'done' || event.type === 'tool_call') break;
        }
        return {
          ok: true,
          message: `${args.provider} answered with ${args.model}`,
          latencyMs: performance.now() - started,
        };
      } catch (error) {
        const failure = toProviderError(error, args.provider, signal);
        const message = signal.aborted
          ? `no answer within ${PROVIDER_TEST_TIMEOUT_MS / 1000} s`
          : failure.message;
        return { ok: false, message, latencyMs: performance.now() - started };
      }
    },

    'providers.catalogue': () => {
      try {
        return catalogueView(home, readSettings(home), clock);
      } catch (error) {
        if (error instanceof ModelChoiceError) throw new IpcFailure('invalid_input', error.message);
        throw error;
      }
    },

    'providers.refreshModels': async (args) => {
      const baseUrl = args.baseUrl ?? readSettings(home).providers[args.provider]?.baseUrl;
      try {
        const list = await refreshServedModels(args.provider, baseUrl, {
          home,
          clock,
          keys: keyStore.read(),
          env,
        });
        return { served: summarizeServed(list, clock) };
      } catch (error) {
        if (error instanceof ProviderError) throw new IpcFailure('provider', error.message);
        throw error;
      }
    },

    'providers.detectLocal': async () => {
      const candidates = options.localServers ?? LOCAL_SERVERS;
      const found = await Promise.all(candidates.map((candidate) => probeLocalServer(candidate)));
      return { servers: found.filter((server) => server !== undefined) };
    },

    'projects.openFolder': async (args) => {
      let chosen: string | null;
      if (options.pickFolder) chosen = await options.pickFolder(args.path);
      else if (args.path === undefined) {
        throw new IpcFailure('not_available', 'keel serve has no folder dialog: type the folder path');
      } else chosen = args.path;
      if (chosen === null) return { folder: null };
      const folder = path.resolve(chosen);
      if (!folderExists(folder))
        throw new IpcFailure('not_found', `${folder} does not exist or is not a folder`);
      const real = fs.realpathSync(folder);
      useProject(real);
      return { folder: real };
    },

    'projects.recent': () => ({
      projects: readRecentProjects(home).map((entry) => ({ ...entry, exists: folderExists(entry.folder) })),
    }),

    'app.launchCommands': () => ({ commands: options.takeLaunchCommands?.() ?? [] }),

    'app.info': async () => {
      const sandbox = await detectSandbox();
      return {
        version: options.version,
        mode: options.mode,
        platform: process.platform,
        home,
        sandbox: { kind: sandbox.kind, reason: sandbox.reason, version: sandbox.version },
      };
    },
  };

  return {
    hub,
    async invoke(channel, input, client = DEFAULT_CLIENT) {
      if (!isChannelName(channel)) {
        return { ok: false, error: { code: 'not_found', message: `unknown channel ${String(channel)}` } };
      }
      if (closed) return { ok: false, error: { code: 'invalid_state', message: 'Keel is shutting down' } };
      const spec = channels[channel];
      const parsed = spec.input.safeParse(input ?? {});
      if (!parsed.success) {
        return { ok: false, error: { code: 'invalid_input', message: describeInvalidInput(parsed.error) } };
      }
      try {
        const handler = table[channel] as (args: unknown, caller: Caller) => unknown;
        const value = await handler(parsed.data, { client });
        const checked = spec.output.safeParse(value);
        if (!checked.success) {
          process.emitWarning(
            `keel: ${channel} returned a value outside the contract: ${checked.error.message}`,
          );
          return {
            ok: false,
            error: {
              code: 'internal',
              message: `${channel} produced an invalid result (${describeInvalidInput(checked.error)})`,
            },
          };
        }
        return { ok: true, value: checked.data };
      } catch (error) {
        return { ok: false, error: toIpcError(error) };
      }
    },
    async disconnect(client) {
      outputFlows.disconnect(client);
      await terminals.disconnect(client);
    },
    runningSessions: () => turns.runningSessions(),
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([turns.stopAll(), terminals.closeAll()]);
      outputFlows.close();
      index.close();
    },
  };
}

/** Why commands.kill found nothing to kill for `toolCallId`, as the error to answer with. */
function whyNotRunning(events: readonly SessionEvent[], toolCallId: string, turnHere: boolean): IpcFailure {
  let started: EventOf<'tool_call_started'> | undefined;
  let finished = false;
  for (const event of events) {
    if (event.kind === 'tool_call_started' && event.toolCallId === toolCallId) {
      started = event;
      finished = false;
    } else if (event.kind === 'tool_result' && event.toolCallId === toolCallId) finished = true;
  }
  if (!started) return new IpcFailure('not_found', `no call ${toolCallId} was started in this session`);
  if (started.tool !== 'run_command') {
    return new IpcFailure('invalid_state', `call ${toolCallId} is a ${started.tool} call, not a command`);
  }
  if (finished) return new IpcFailure('invalid_state', `command ${toolCallId} has already finished`);
  if (turnHere) {
    return new IpcFailure('invalid_state', `command ${toolCallId} is still starting: try again in a moment`);
  }
  return new IpcFailure(
    'invalid_state',
    `command ${toolCallId} is not running in this Keel process (another process, such as the CLI, runs its turn: stop that turn)`,
  );
}

function assertHasCheckouts(log: SessionLog): void {
  if (!persistentConfigOf(log)) {
    throw new IpcFailure(
      'invalid_state',
      `session ${log.id} works on its project folder directly: there are no checkout changes to apply or discard`,
    );
  }
}

function toCompactionSummary(record: CompactionRecord): CompactionSummary {
  return {
    seq: record.seq,
    at: record.at,
    fromSeq: record.fromSeq,
    through: record.through,
    ...(record.tokensBefore !== undefined ? { tokensBefore: record.tokensBefore } : {}),
    ...(record.tokensAfter !== undefined ? { tokensAfter: record.tokensAfter } : {}),
    ...(record.model !== undefined ? { model: record.model } : {}),
    ...(record.supersedes !== undefined ? { supersedes: record.supersedes } : {}),
    status: record.status,
    ...(record.supersededBy !== undefined ? { supersededBy: record.supersededBy } : {}),
    superseded: record.status === 'superseded',
  };
}

/** Asks one candidate for its models; undefined when nothing answers quickly. */
async function probeLocalServer(
  candidate: LocalServerCandidate,
): Promise<{ name: string; baseUrl: string; models: string[] } | undefined> {
  try {
    const response = await fetch(`${candidate.baseUrl}/models`, {
      signal: AbortSignal.timeout(LOCAL_PROBE_TIMEOUT_MS),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { data?: { id?: unknown }[] };
    const models = (body.data ?? []).flatMap((model) => (typeof model.id === 'string' ? [model.id] : []));
    return { name: candidate.name, baseUrl: candidate.baseUrl, models };
  } catch {
    return undefined;
  }
}
