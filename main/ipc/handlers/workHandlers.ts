import {
  commitDirs,
  commitHistory,
  type CompactionRecord,
  comparePayloads,
  discardDirs,
  inspectCompactions,
  inspectSessionCompactions,
  newTurnWarning,
  persistentConfigOf,
  readFileVersions,
  readSettings,
  reviewPersistentDirs,
  runCompaction,
  type SessionLog,
} from '../../core/harness/index.js';
import { type CompactionSummary } from '../contract.js';
import { IpcFailure } from '../errors.js';
import type { workChannels } from '../contract/workChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** The handlers of compactions and Persistent Dir review. */
export function workHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof workChannels> {
  const { home, env, keyStore, serialReview, turns, readLog } = ctx;
  return {
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
  };
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
