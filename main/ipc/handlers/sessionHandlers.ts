import fs from 'node:fs';
import path from 'node:path';
import {
  changePolicy,
  checkPolicyChange,
  effectiveEffort,
  foldSession,
  importMarkOf,
  loadSessionState,
  needsModel,
  newSessionId,
  APPROVAL_KINDS,
  pendingApprovals,
  readPersistentConfig,
  readSettings,
  reasoningChoices,
  rememberContextWindow,
  SessionLog,
  sessionNetworkAllow,
  toolModeFor,
  unansweredCalls,
  withIndexBehind,
} from '../../core/harness/index.js';
import type { EventOf } from '../../common/events.js';
import { type ProjectGroup } from '../contract.js';
import { IpcFailure } from '../errors.js';
import type { sessionChannels } from '../contract/sessionChannels.js';
import type { HandlerContext } from './context.js';
import { localPin } from './localModelHandlers.js';
import type { HandlerTable } from './types.js';

/** The handlers of sessions, their events and turns. */
export function sessionHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof sessionChannels> {
  const {
    home,
    hub,
    index,
    turns,
    terminals,
    folderExists,
    toSummary,
    summaryOf,
    readLog,
    useProject,
    choose,
    modelRequest,
    heldElsewhere,
  } = ctx;
  return {
    'sessions.list': (args) => {
      const rows = index.list({
        limit: args.limit + 1,
        offset: args.offset,
        ...(args.search !== undefined && args.search.trim() !== '' ? { search: args.search } : {}),
        ...(args.projectFolder !== undefined ? { projectFolder: args.projectFolder } : {}),
        includeArchived: args.includeArchived,
      });
      // The same lag `keel sessions` reports: a running turn's events are indexed when it ends.
      const page = withIndexBehind(home, index, rows.slice(0, args.limit));
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
      // Issue 34: a local model is pinned by its file and SHA-256 (a catalogue id, hf: URI or path it was pulled as).
      const { pin, warning, windowToRemember } =
        args.provider === 'local'
          ? {
              pin: await localPin(home, args.model, args.contextWindow),
              warning: undefined,
              windowToRemember: undefined,
            }
          : await choose(modelRequest(args));
      if (args.reasoningEffort !== undefined) checkEffort(pin.model, args.reasoningEffort);
      const real = fs.realpathSync(folder);
      // The app is a host of the session API: its sessions are made as a library user's are.
      const session = await turns.harness.sessions.getOrCreate({
        id: newSessionId(),
        ...(args.title ? { title: args.title } : {}),
        create: {
          model: { ...pin, ...(args.reasoningEffort ? { reasoningEffort: args.reasoningEffort } : {}) },
          ...(args.checkout === 'direct'
            ? { projectFolder: real }
            : { persistentDirs: { project: { path: real, commit: args.checkout } } }),
          policy: args.policy,
          toolMode: toolModeFor(args.policy, args.toolMode),
          networkAllow: args.networkAllow,
          ...(args.budget ? { budget: args.budget } : {}),
        },
      });
      const id = session.id;
      // Issue #37: a window the person typed for an unknown model is asked once, then kept.
      if (windowToRemember !== undefined) rememberContextWindow(home, pin.model, windowToRemember);
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
        const created = log.read({ fromSeq: 1, limit: 1 })[0] as EventOf<'session_created'>;
        const pending = pendingApprovals(
          log.readKinds(APPROVAL_KINDS, { validate: false }),
          importMarkOf(created),
        );
        const compactedAt = log.lastSeqOfKind('compaction') ?? 0;
        const usage =
          state.lastUsage && (state.lastUsageSeq ?? 0) > compactedAt ? state.lastUsage : undefined;
        const threshold = readSettings(home).compaction.threshold;
        const running = turns.isRunning(args.sessionId);
        const live = turns.liveReply(args.sessionId);
        return {
          ...(live ? { live } : {}),
          session,
          pin: state.pin,
          policy: state.policy,
          toolMode: state.toolMode,
          planMode: state.planMode,
          networkAllow: sessionNetworkAllow(created),
          ...(created.forkedFrom ? { forkedFrom: created.forkedFrom } : {}),
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
      const before = readLog(args.sessionId, (log) => ({
        pin: loadSessionState(log).pin,
        lastSeq: log.lastSeq(),
      }));
      const request = {
        ...modelRequest(args),
        ...(args.reasoningEffort !== undefined ? { reasoningEffort: args.reasoningEffort } : {}),
      };
      const { pin, warning, effortWarning, windowToRemember } = await choose(request, before.pin);
      // Issue #37: a window typed for an unknown model is kept (asked once), like at a session's creation.
      if (windowToRemember !== undefined) rememberContextWindow(home, pin.model, windowToRemember);
      const said = { ...(warning ? { warning } : {}), ...(effortWarning ? { effortWarning } : {}) };
      // Issue #37: while a turn runs, its next request takes the switch.
      if (turns.queueSettingsChange(args.sessionId, { kind: 'model_changed', ...pin }))
        return { pin, previous: before.pin, ...said, queued: true };
      return turns.appendWhileIdle(args.sessionId, (log) => {
        // The provider was asked meanwhile: a turn or another switch in between makes this one stale.
        const appended = log.append({ kind: 'model_changed', ...pin }, { expectedLastSeq: before.lastSeq });
        if (!appended.ok) throw new IpcFailure('invalid_state', 'the session changed meanwhile: try again');
        return {
          events: appended.events,
          value: {
            pin,
            previous: before.pin,
            ...(warning ? { warning } : {}),
            ...(effortWarning ? { effortWarning } : {}),
          },
        };
      });
    },

    'sessions.setReasoning': (args) => {
      const { pin } = readLog(args.sessionId, (log) => loadSessionState(log));
      if (turns.isRunning(args.sessionId)) {
        checkEffort(pin.model, args.effort);
        const previous = effectiveEffort(pin.model, pin.reasoningEffort);
        if (turns.queueSettingsChange(args.sessionId, { kind: 'reasoning_changed', effort: args.effort }))
          return { effort: args.effort, previous, queued: true };
      }
      return turns.appendWhileIdle(args.sessionId, (log) => {
        const { pin } = loadSessionState(log);
        checkEffort(pin.model, args.effort);
        const previous = effectiveEffort(pin.model, pin.reasoningEffort);
        const appended = log.append({ kind: 'reasoning_changed', effort: args.effort });
        if (!appended.ok) throw new IpcFailure('invalid_state', 'the session changed meanwhile: try again');
        return { events: appended.events, value: { effort: args.effort, previous } };
      });
    },

    'sessions.setPolicy': (args) => {
      if (turns.isRunning(args.sessionId)) {
        const state = readLog(args.sessionId, (log) => loadSessionState(log));
        const policy = checkPolicyChange(state, args.policy);
        if (turns.queueSettingsChange(args.sessionId, { kind: 'policy_changed', policy }))
          return { policy, previous: state.policy, queued: true };
      }
      return turns.appendWhileIdle(args.sessionId, (log) => {
        const { policy, previous, events } = changePolicy(log, args.policy);
        return { events, value: { policy, previous } };
      });
    },

    'sessions.archive': async (args) => {
      if (!index.setArchived(args.sessionId, args.archived)) {
        throw new IpcFailure('not_found', `no session ${args.sessionId}`);
      }
      // An archived session is closed: its MCP servers stop (its next turn starts them again).
      if (args.archived) await turns.stopMcp(args.sessionId);
      hub.publish('sessions.changed', { sessionId: args.sessionId, change: 'archived' });
      return { session: summaryOf(args.sessionId) };
    },

    'sessions.delete': async (args) => {
      turns.assertIdle(args.sessionId);
      // Its shells run inside the session's folder: they go first.
      await terminals.killSession(args.sessionId);
      await turns.stopMcp(args.sessionId);
      // Issue #30: a deleted session has ended (SessionEnd, reason `clear`), unless its end ran already.
      await turns.harness.endSessions({ reason: 'clear', sessionId: args.sessionId });
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
      turnId: await turns.start(args.sessionId, {
        prompt: args.prompt,
        discardChanges: args.discardChanges,
        attachments: args.attachments.map(({ name, data }) => ({
          ...(name !== undefined ? { name } : {}),
          data: Buffer.from(data, 'base64'),
        })),
        uploads: args.uploads.map(({ name, data }) => ({ name, data: Buffer.from(data, 'base64') })),
        ...(args.planMode !== undefined ? { planMode: args.planMode } : {}),
      }),
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
  };
}

/** Refuses an effort the model does not take (off for a model that always reasons), naming the choices. */
function checkEffort(model: string, effort: string): void {
  const choices: readonly string[] = reasoningChoices(model);
  if (!choices.includes(effort)) {
    throw new IpcFailure('invalid_input', `${model} always reasons: choose ${choices.join(', ')}`);
  }
}
