import fs from 'node:fs';
import {
  chooseModel,
  isLeaseStale,
  ModelChoiceError,
  type ModelRequest,
  openCheckout,
  openSessionIndex,
  persistentConfigOf,
  readSettings,
  SessionLog,
  type SessionSummary as IndexSummary,
  TurnManager,
} from '../../core/harness/index.js';
import { systemClock } from '../../common/clock.js';
import type { ModelPin } from '../../common/events.js';
import type { SessionSummary, SettingsView } from '../contract.js';
import { IpcFailure } from '../errors.js';
import { createHub, hubReports } from '../hub.js';
import { endpointKeyUrls, environmentKeyStore, fileKeyStore, keyPresence } from '../keys.js';
import { OutputFlows } from '../outputFlows.js';
import { rememberProject } from '../recentProjects.js';
import { TerminalManager } from '../terminals.js';
import type { HandlerOptions } from './types.js';

/**
 * What every group of handlers shares: the home, the index, the turn and terminal managers, the key store,
 * the clock, and the helpers the groups use. Built once per handler table.
 */
export function createHandlerContext(options: HandlerOptions) {
  const { home } = options;
  const env = options.env ?? process.env;
  // Issue #37: under `keel serve` keys typed in the page are kept in the home's key file (over the environment's).
  const keyStore =
    options.keyStore ?? (options.mode === 'serve' ? fileKeyStore(home) : environmentKeyStore());
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
  const index = openSessionIndex(home);
  // The lookup runs only once a command streams, long after `turns` exists.
  const outputFlows: OutputFlows = new OutputFlows({
    lookup: (sessionId, toolCallId) => turns.runningCommandOf(sessionId, toolCallId),
  });
  const turns = new TurnManager({
    home,
    reports: hubReports(hub),
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
  const state = { closed: false };

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
    endpointKeys: endpointKeyUrls(keyStore),
    keyStorage: keyStore.kind,
  });

  const heldElsewhere = (sessionId: string): boolean => {
    const holder = index.leaseHolder(sessionId);
    if (!holder || isLeaseStale(holder)) return false;
    return !(holder.pid === process.pid && turns.isRunning(sessionId));
  };

  return {
    options,
    home,
    env,
    keyStore,
    clock,
    hub,
    reviewQueues,
    serialReview,
    index,
    outputFlows,
    turns,
    terminals,
    folderExists,
    toSummary,
    summaryOf,
    readLog,
    useProject,
    choose,
    modelRequest,
    settingsView,
    heldElsewhere,
    state,
  };
}

/** The shared state a group of handlers is built over. */
export type HandlerContext = ReturnType<typeof createHandlerContext>;
