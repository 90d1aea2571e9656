import { appendFileSync, cpSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import {
  finishTurn,
  markTurnStarted,
  openCheckout,
  persistentConfigOf,
  prepareTurn,
} from '../../main/core/persistent/turnCheckouts.js';
import { gitProcessCount } from '../../main/core/persistent/git.js';
import { createHarness } from '../../main/core/harness/harness.js';
import { withWritableSession } from '../../main/core/harness/lock.js';
import type { Bench } from './benches/context.js';
import { buildGitProject } from './gitProject.js';
import { makeMetric, median, percentile, round } from './harness.js';
import type { Sizes } from './sizes.js';
import { SIZE_PROFILES } from './sizes.js';

/** Workload of the session benchmarks per size profile (sizes.ts is the bench runner's; these are ours). */
export type SessionBenchSizes = {
  /** Files in the git project that is checked out. */
  projectFiles: number;
  /** Files the model changes per turn. */
  changedFiles: number;
  /** Timed turns (reset + commit). */
  turns: number;
  /** Timed getOrCreate calls on an existing session: with a warm harness, and each with a new harness. */
  warmLookups: number;
  coldLookups: number;
  /** Megabytes staged through files.write. */
  stageMb: number;
};

/** The profiles: `full` is what the README reports (10k-file project, 1 GB staged). */
export const SESSION_BENCH_SIZES: Record<'full' | 'quick' | 'tiny', SessionBenchSizes> = {
  full: {
    projectFiles: 10_000,
    changedFiles: 10,
    turns: 15,
    warmLookups: 2_000,
    coldLookups: 50,
    stageMb: 1024,
  },
  quick: {
    projectFiles: 10_000,
    changedFiles: 10,
    turns: 7,
    warmLookups: 500,
    coldLookups: 20,
    stageMb: 128,
  },
  tiny: { projectFiles: 200, changedFiles: 10, turns: 2, warmLookups: 20, coldLookups: 3, stageMb: 4 },
};

function profileOf(sizes: Sizes): SessionBenchSizes {
  if (sizes === SIZE_PROFILES.tiny) return SESSION_BENCH_SIZES.tiny;
  if (sizes === SIZE_PROFILES.quick) return SESSION_BENCH_SIZES.quick;
  return SESSION_BENCH_SIZES.full;
}

function p90(sample: readonly number[]): number {
  return percentile(
    [...sample].sort((a, b) => a - b),
    90,
  );
}

/**
 * The first checkout of a session's project, then `turns` turns of: reset (prepareTurn), `changedFiles`
 * edits in the checkout, auto-commit (finishTurn). Times in ms.
 */
async function measureCheckouts(
  home: string,
  id: string,
  profile: SessionBenchSizes,
  progress: (message: string) => void,
): Promise<{
  kind: string;
  firstMs: number;
  resets: number[];
  commits: number[];
  totals: number[];
  /** Processes the checkout engine spawned per turn for the reset and for the commit. */
  resetGits: number[];
  commitGits: number[];
}> {
  progress(`sessions: first checkout (${id})`);
  const first = await withWritableSession(home, id, async (log) => {
    const spec = persistentConfigOf(log)?.dirs[0];
    if (!spec) throw new Error('the bench session has no project dir');
    const t0 = performance.now();
    const checkout = await openCheckout(log, spec);
    return { ms: performance.now() - t0, kind: checkout.kind, path: checkout.location.checkout };
  });
  // A real first turn starts seconds after its checkout. Git treats files written in the same second as
  // its index as "racily clean" and hashes all of them at every scan until an index is saved in a later
  // second: turns started at once would measure that (the whole project hashed per turn) instead of a turn.
  await new Promise((resolve) => setTimeout(resolve, 1_050 - (Date.now() % 1_000)));
  const resets: number[] = [];
  const commits: number[] = [];
  const totals: number[] = [];
  const resetGits: number[] = [];
  const commitGits: number[] = [];
  for (let turn = 0; turn < profile.turns; turn++) {
    progress(
      `sessions: ${id} turn ${turn + 1}/${profile.turns} (reset, ${profile.changedFiles} edits, commit)`,
    );
    await withWritableSession(home, id, async (log) => {
      const g0 = gitProcessCount();
      const t0 = performance.now();
      await prepareTurn(log, { newTurn: true });
      const reset = performance.now() - t0;
      const g1 = gitProcessCount();
      const config = persistentConfigOf(log);
      if (config) markTurnStarted(log.dir, config);
      // A view's files are written through its holder (the host path is only its mount point).
      const spec = config?.dirs[0];
      if (!spec) throw new Error('the bench session has no project dir');
      const root = await (await openCheckout(log, spec)).mount();
      // The commit's git processes from here: a view's mount may run git (its index back), not the commit's.
      const g2 = gitProcessCount();
      for (let i = 0; i < profile.changedFiles; i++) {
        const index = ((turn * profile.changedFiles + i) * 7) % profile.projectFiles;
        appendFileSync(join(root, 'src', `d${Math.floor(index / 100)}`, `f${index}.ts`), `// turn ${turn}\n`);
      }
      const t1 = performance.now();
      const reports = await finishTurn(log);
      const commit = performance.now() - t1;
      resetGits.push(g1 - g0);
      commitGits.push(gitProcessCount() - g2);
      if (reports[0]?.status !== 'committed')
        throw new Error(`${id} turn ${turn}: the commit did not happen`);
      resets.push(reset);
      commits.push(commit);
      totals.push(reset + commit);
    });
  }
  return { kind: first.kind, firstMs: first.ms, resets, commits, totals, resetGits, commitGits };
}

/**
 * The session API's costs: getOrCreate of an existing session (warm handle cache, and a fresh harness as
 * after a restart); the first checkout of a git project and, per turn, the reset before it and the auto
 * commit after it with a few changed files (target: reset + commit < 200 ms for 10k files, 10 changed);
 * staging a big upload through files.write (throughput, and peak memory growth, which must stay bounded).
 */
export const sessionsBench: Bench = {
  name: 'sessions',
  title: 'Session API: getOrCreate, checkout reset + auto-commit, file staging',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const profile = profileOf(sizes);
    const dir = scratch.dir('sessions');
    const home = join(dir, 'home');
    const project = join(dir, 'project');
    const metrics = [];
    const notes: string[] = [];

    progress(`sessions: building a ${profile.projectFiles}-file git project`);
    buildGitProject(project, profile.projectFiles);
    const options = {
      home,
      model: {
        provider: 'openai-compatible' as const,
        model: 'bench',
        baseUrl: 'http://127.0.0.1:9',
        contextWindow: 32_000,
      },
      persistentDirs: { project },
    };
    const harness = createHarness(options);
    const session = await harness.sessions.getOrCreate({ id: 'bench' });

    progress('sessions: getOrCreate of an existing session');
    const warm: number[] = [];
    for (let i = 0; i < profile.warmLookups; i++) {
      const t0 = performance.now();
      await harness.sessions.getOrCreate({ id: 'bench' });
      warm.push(performance.now() - t0);
    }
    const cold: number[] = [];
    for (let i = 0; i < profile.coldLookups; i++) {
      const t0 = performance.now();
      await createHarness(options).sessions.getOrCreate({ id: 'bench' });
      cold.push(performance.now() - t0);
    }
    metrics.push(
      makeMetric('getOrCreate existing session, same harness (median)', 'µs', 'lower', {
        keel: round(Math.max(median(warm) * 1000, 0.01), 2),
      }),
      makeMetric('getOrCreate existing session, new harness (median)', 'ms', 'lower', {
        keel: round(median(cold), 3),
      }),
    );

    notes.push(
      `load average before the checkouts: ${round(os.loadavg()[0] ?? 0, 2)} on ${os.cpus().length} cores`,
    );
    const git = await measureCheckouts(home, 'bench', profile, progress);
    metrics.push(
      makeMetric(
        `first checkout of a ${profile.projectFiles}-file git project (${git.kind})`,
        'ms',
        'lower',
        {
          keel: round(git.firstMs, 1),
        },
      ),
      makeMetric('per-turn reset of the checkout (median)', 'ms', 'lower', {
        keel: round(median(git.resets), 1),
      }),
      makeMetric(`per-turn auto-commit of ${profile.changedFiles} changed files (median)`, 'ms', 'lower', {
        keel: round(median(git.commits), 1),
      }),
      makeMetric('per-turn reset + commit (median)', 'ms', 'lower', { keel: round(median(git.totals), 1) }),
      makeMetric('per-turn reset + commit (p90)', 'ms', 'lower', { keel: round(p90(git.totals), 1) }),
      makeMetric('processes spawned per turn: reset + commit (median)', 'count', 'lower', {
        keel: median(git.resetGits.map((n, i) => n + (git.commitGits[i] ?? 0))),
      }),
    );
    notes.push(
      `processes spawned per turn (a git, or one sh running a batch of gits): reset ${median(git.resetGits)}, commit ${median(git.commitGits)} (medians)`,
    );
    if (profile.projectFiles >= 10_000) {
      const value = median(git.totals);
      notes.push(
        `target reset + commit < 200 ms per turn: ${value < 200 ? 'met' : 'missed'} (median ${round(value, 1)} ms)`,
      );
    }

    // The same folder without git: a shadow repository hashes it once, then works like a worktree.
    const plainProject = join(dir, 'plain');
    cpSync(join(project, 'src'), join(plainProject, 'src'), { recursive: true });
    await createHarness({ ...options, persistentDirs: { project: plainProject } }).sessions.getOrCreate({
      id: 'bench-plain',
    });
    const shadow = await measureCheckouts(home, 'bench-plain', profile, progress);
    metrics.push(
      makeMetric(
        `first checkout of a ${profile.projectFiles}-file folder without git (${shadow.kind})`,
        'ms',
        'lower',
        {
          keel: round(shadow.firstMs, 1),
        },
      ),
      makeMetric('per-turn reset + commit without git (median)', 'ms', 'lower', {
        keel: round(median(shadow.totals), 1),
      }),
    );

    progress(`sessions: staging ${profile.stageMb} MB`);
    const chunk = Buffer.alloc(1024 * 1024, 'k');
    const total = profile.stageMb;
    async function* upload() {
      for (let i = 0; i < total; i++) {
        yield chunk;
        if (i % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
    }
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
    const t0 = performance.now();
    const staged = await session.files.write('/session/uploads/big.bin', Readable.from(upload()), {
      mediaType: 'application/octet-stream',
    });
    const stageMs = performance.now() - t0;
    clearInterval(sampler);
    if (staged.size !== total * 1024 * 1024)
      throw new Error(`staged ${staged.size} bytes, expected ${total} MiB`);
    metrics.push(
      makeMetric(`files.write of ${total} MB (throughput)`, 'MB/s', 'higher', {
        keel: round(total / (stageMs / 1000), 1),
      }),
      makeMetric(`files.write of ${total} MB: peak process RSS`, 'MB', 'lower', {
        keel: round(peak / 1024 / 1024, 1),
      }),
    );
    notes.push(
      `staging ${total} MB grew the process RSS by ${round((peak - baseline) / 1024 / 1024, 1)} MB at most`,
    );
    notes.push('staging hashes (sha256) and fsyncs the file before recording file_staged');
    scratch.remove(dir);
    return {
      name: 'sessions',
      title: sessionsBench.title,
      params: {
        projectFiles: profile.projectFiles,
        changedFiles: profile.changedFiles,
        turns: profile.turns,
        stageMb: profile.stageMb,
      },
      metrics,
      notes,
      skipped: {},
      durationMs: round(performance.now() - started, 0),
    };
  },
};
