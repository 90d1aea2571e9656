import { appendFileSync, realpathSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { SessionEvent } from '../../../main/common/events.js';
import { forkSession } from '../../../main/core/history/fork.js';
import { revertChanges } from '../../../main/core/history/revert.js';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import {
  finishTurn,
  markTurnStarted,
  openCheckout,
  persistentConfigOf,
  prepareTurn,
} from '../../../main/core/persistent/turnCheckouts.js';
import { createHarness } from '../../../main/core/harness/harness.js';
import { withWritableSession } from '../../../main/core/harness/lock.js';
import { buildCodingSession } from '../conversation.js';
import { buildGitProject } from '../gitProject.js';
import { makeMetric, median, round } from '../harness.js';
import { SIZE_PROFILES, type Sizes } from '../sizes.js';
import type { Bench } from './context.js';

/** Workload per size profile (kept here: the runner's sizes.ts is shared by every bench). */
const HISTORY_SIZES = {
  full: { projectFiles: 10_000, changedFiles: 10, revertRuns: 9, forkEvents: 10_000, forkRuns: 9 },
  quick: { projectFiles: 10_000, changedFiles: 10, revertRuns: 5, forkEvents: 10_000, forkRuns: 5 },
  tiny: { projectFiles: 200, changedFiles: 10, revertRuns: 2, forkEvents: 200, forkRuns: 2 },
};

/** The targets (issue 18): revert of a 10-file turn in a 10k-file git project, fork of a 10k-event session. */
export const REVERT_TARGET_MS = 300;
export const FORK_TARGET_MS = 200;

function profileOf(sizes: Sizes) {
  if (sizes === SIZE_PROFILES.tiny) return HISTORY_SIZES.tiny;
  if (sizes === SIZE_PROFILES.quick) return HISTORY_SIZES.quick;
  return HISTORY_SIZES.full;
}

/** A conversation of `count` events: user message, a read_file call and its result, an answer, repeated. */
function conversation(id: string, project: string, count: number): SessionEvent[] {
  return buildCodingSession({
    sessionId: id,
    projectFolder: project,
    eventCount: count,
    idempotencyKey: (block) => `k${block}`,
    toolOutput: 'package limit\n'.repeat(20),
    answer: (block) => `Done with step ${block}.`,
    wholeBlocks: false,
  });
}

/**
 * Issue 18's two costs: reverting a turn that changed 10 files of a 10k-file git project (in process, through
 * the function `keel revert` and the app call: the user's snapshot (git status), the plan, the journal, the
 * writes, the events), and forking a 10k-event session at its end and at its middle (copying the log, linking
 * the history store). Medians; the targets are PASS/FAIL in the report.
 */
export const historyBench: Bench = {
  name: 'history',
  title: 'History: revert a 10-file turn in a 10k-file git project; fork a 10k-event session',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const profile = profileOf(sizes);
    const dir = scratch.dir('history');
    const home = join(dir, 'home');
    const project = join(dir, 'project');
    const notes: string[] = [];

    progress(`history: building a ${profile.projectFiles}-file git project`);
    buildGitProject(project, profile.projectFiles);
    await createHarness({
      home,
      model: {
        provider: 'openai-compatible',
        model: 'bench',
        baseUrl: 'http://127.0.0.1:9',
        contextWindow: 32_000,
      },
      persistentDirs: { project },
    }).sessions.getOrCreate({ id: 'bench-revert' });
    await withWritableSession(home, 'bench-revert', async (log) => {
      const spec = persistentConfigOf(log)?.dirs[0];
      if (!spec) throw new Error('the bench session has no project dir');
      await openCheckout(log, spec);
    });
    // Git counts files written in the same second as its index as racily clean (see sessions.bench.ts).
    await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1_000)));

    const reverts: number[] = [];
    for (let run = 0; run < profile.revertRuns; run++) {
      progress(`history: revert ${run + 1}/${profile.revertRuns} (a turn of ${profile.changedFiles} files)`);
      const seq = await withWritableSession(home, 'bench-revert', async (log) => {
        await prepareTurn(log, { newTurn: true });
        const config = persistentConfigOf(log);
        if (config) markTurnStarted(log.dir, config);
        // A view's files are written through its holder (the host path is only its mount point).
        const spec = config?.dirs[0];
        if (!spec) throw new Error('the bench session has no project dir');
        const root = await (await openCheckout(log, spec)).mount();
        for (let i = 0; i < profile.changedFiles; i++) {
          const index = ((run * profile.changedFiles + i) * 7) % profile.projectFiles;
          appendFileSync(join(root, 'src', `d${Math.floor(index / 100)}`, `f${index}.ts`), `// ${run}\n`);
        }
        const [report] = await finishTurn(log);
        if (report?.status !== 'committed')
          throw new Error(`revert run ${run}: the turn's commit did not happen`);
        return log.lastSeq();
      });
      const ms = await withWritableSession(home, 'bench-revert', async (log) => {
        const t0 = performance.now();
        const outcome = await revertChanges(log, { seq });
        const took = performance.now() - t0;
        if (outcome.status !== 'reverted' || outcome.files.length !== profile.changedFiles)
          throw new Error(`revert run ${run}: ${outcome.status}`);
        return took;
      });
      reverts.push(ms);
    }

    progress(`history: a ${profile.forkEvents}-event session to fork`);
    const forkHome = join(dir, 'fork-home');
    const parent = SessionLog.importEvents(
      forkHome,
      conversation('bench-fork', realpathSync(project), profile.forkEvents),
    );
    const whole: number[] = [];
    const middle: number[] = [];
    // Just before a user message near the middle: a point a fork can start at.
    const middleAt = Math.floor(profile.forkEvents / 10) * 5 + 1;
    for (let run = 0; run < profile.forkRuns; run++) {
      progress(`history: fork ${run + 1}/${profile.forkRuns}`);
      let t0 = performance.now();
      const all = forkSession(forkHome, parent);
      whole.push(performance.now() - t0);
      if (all.events !== profile.forkEvents) throw new Error(`fork copied ${all.events} events`);
      t0 = performance.now();
      forkSession(forkHome, parent, { at: middleAt });
      middle.push(performance.now() - t0);
    }

    const revertMs = median(reverts);
    const forkMs = median(whole);
    notes.push(
      `load average at the end: ${round(os.loadavg()[0] ?? 0, 2)} on ${os.cpus().length} cores`,
      `revert < ${REVERT_TARGET_MS} ms: ${revertMs < REVERT_TARGET_MS ? 'PASS' : 'FAIL'} (median ${round(revertMs, 1)} ms, ${profile.projectFiles} files)`,
      `fork < ${FORK_TARGET_MS} ms: ${forkMs < FORK_TARGET_MS ? 'PASS' : 'FAIL'} (median ${round(forkMs, 1)} ms, ${profile.forkEvents} events)`,
    );
    scratch.remove(dir);
    return {
      name: 'history',
      title: historyBench.title,
      params: { ...profile },
      metrics: [
        makeMetric(
          `revert of a ${profile.changedFiles}-file turn in a ${profile.projectFiles}-file git project (median)`,
          'ms',
          'lower',
          { keel: round(revertMs, 1) },
        ),
        makeMetric('revert (max)', 'ms', 'lower', { keel: round(Math.max(...reverts), 1) }),
        makeMetric(`fork of a ${profile.forkEvents}-event session, whole (median)`, 'ms', 'lower', {
          keel: round(forkMs, 1),
        }),
        makeMetric(`fork of a ${profile.forkEvents}-event session at its middle (median)`, 'ms', 'lower', {
          keel: round(median(middle), 1),
        }),
      ],
      notes,
      skipped: {},
      durationMs: round(performance.now() - started, 0),
    };
  },
};
