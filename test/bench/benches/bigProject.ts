import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { withWritableSession } from '../../../main/core/harness/lock.js';
import { checkoutLocation } from '../../../main/core/persistent/config.js';
import { diskUsage } from '../../../main/core/persistent/reclaim.js';
import {
  finishTurn,
  markTurnStarted,
  persistentConfigOf,
  prepareTurn,
} from '../../../main/core/persistent/turnCheckouts.js';
import { ensureCliBuilt } from '../../support/cli.js';
import { ProviderServer, type ScriptStep } from '../../support/providerServer.js';
import { buildGitProject } from '../gitProject.js';
import { makeMetric, median, round } from '../harness.js';
import { SIZE_PROFILES, type Sizes } from '../sizes.js';
import { runKeelTimed } from './cliStart.js';
import type { Bench } from './context.js';

/** Issue 36's workload per size profile: a small and a large generated git project. */
type BigProjectSizes = {
  small: number;
  large: number;
  /** `keel run` sessions one after another on the large project (their checkouts' storage is measured). */
  sessions: number;
  /** First-request runs per mode and project. */
  runs: number;
  /** Timed in-process turns (reset + 10-file auto commit) per project. */
  turns: number;
};

export const BIG_PROJECT_SIZES: Record<'full' | 'quick' | 'tiny', BigProjectSizes> = {
  full: { small: 1_000, large: 80_000, sessions: 100, runs: 2, turns: 9 },
  quick: { small: 1_000, large: 10_000, sessions: 10, runs: 2, turns: 5 },
  tiny: { small: 50, large: 200, sessions: 2, runs: 1, turns: 2 },
};

function profileOf(sizes: Sizes): BigProjectSizes {
  if (sizes === SIZE_PROFILES.tiny) return BIG_PROJECT_SIZES.tiny;
  if (sizes === SIZE_PROFILES.quick) return BIG_PROJECT_SIZES.quick;
  return BIG_PROJECT_SIZES.full;
}

const MB = 1024 * 1024;
const CHANGED = 10;

/** The model of a one-turn session: `CHANGED` write_file calls when `writes`, then a text answer. */
function turnScript(writes: boolean, tag: string): ScriptStep[] {
  const answer: ScriptStep = { kind: 'reply', text: 'done' };
  if (!writes) return [answer];
  const toolCalls = Array.from({ length: CHANGED }, (_, i) => ({
    name: 'write_file',
    arguments: { path: `src/d${i}/f${i * 100}.ts`, content: `export const changed${i} = '${tag}';\n` },
  }));
  return [{ kind: 'reply', toolCalls }, answer];
}

/**
 * Runs `keel run` once on `project` (a new session); the scripted provider stamps the first request.
 * Returns ms from spawn to the first provider request.
 */
async function keelRun(
  server: ProviderServer,
  plan: ScriptStep[],
  stamps: number[],
  home: string,
  project: string,
  mode: 'direct' | 'checkout' | 'view',
): Promise<number> {
  const direct = mode === 'direct';
  plan.length = 0;
  stamps.length = 0;
  plan.push(...turnScript(true, `${Date.now()}`));
  const args = [
    '--home',
    home,
    'run',
    '--project',
    project,
    '--provider',
    'openai-compatible',
    '--base-url',
    server.openaiBaseUrl,
    '--model',
    'scripted-model',
    '--context-window',
    '32000',
    '--policy',
    'auto-edit',
    ...(direct ? ['--commit', 'direct'] : []),
    'change ten files',
  ];
  // Issue #36: the copy-on-write view, forced (settings' `auto` is still a full copy).
  const { startedAt } = await runKeelTimed(args, { KEEL_CHECKOUT_KIND: mode === 'view' ? 'view' : 'copy' });
  const first = stamps[0];
  if (first === undefined) throw new Error('keel run made no provider request');
  return first - startedAt;
}

/** The newest session folder of `home` (the one `keel run` just made). */
function newestSession(home: string, before: ReadonlySet<string>): string {
  const added = readdirSync(join(home, 'sessions')).filter((id) => !before.has(id));
  if (added.length !== 1) throw new Error(`expected one new session, found ${added.length}`);
  return join(home, 'sessions', added[0] as string);
}

/** Bytes of a session folder but its log (events.sqlite and its -wal / -shm). */
function sessionDiskBesidesLog(dataDir: string): number {
  const log = ['events.sqlite', 'events.sqlite-wal', 'events.sqlite-shm'];
  return diskUsage(dataDir) - log.reduce((sum, name) => sum + diskUsage(join(dataDir, name)), 0);
}

/** Checkout storage of every session of `home`: checkout files, state folders, the worktrees' admin folders. */
function checkoutStorageOf(home: string, project: string): number {
  let total = diskUsage(join(project, '.git', 'worktrees'));
  for (const id of readdirSync(join(home, 'sessions'))) {
    const dataDir = join(home, 'sessions', id);
    total += diskUsage(join(dataDir, 'workspace', 'persistent')) + diskUsage(join(dataDir, 'checkouts'));
  }
  return total;
}

/** Per-turn overhead of an existing session in-process: reset, `CHANGED` edits, auto commit; ms per turn. */
async function turnOverhead(home: string, dataDir: string, turns: number): Promise<number> {
  const id = dataDir.split('/').pop() as string;
  const times: number[] = [];
  for (let turn = 0; turn <= turns; turn += 1) {
    const t0 = performance.now();
    await withWritableSession(home, id, async (log) => {
      await prepareTurn(log, { newTurn: true });
      const config = persistentConfigOf(log);
      if (!config) throw new Error('the session has no checkout');
      markTurnStarted(log.dir, config);
      const checkout = checkoutLocation(log.dir, 'project').checkout;
      for (let i = 0; i < CHANGED; i += 1)
        writeFileSync(
          join(checkout, 'src', `d${i}`, `f${i * 100 + 1}.ts`),
          `export const t${turn} = ${i};\n`,
        );
      await finishTurn(log);
    });
    // The first turn after `keel run` is a warm-up (git's racily-clean second, the caches).
    if (turn > 0) times.push(performance.now() - t0);
  }
  return median(times);
}

/**
 * Issue 36: big projects. On a generated small and large git project: the first provider request of a new
 * `keel run` session with a checkout and with `--commit direct`; the disk a one-turn 10-file session adds
 * besides its log, after the turn and after `keel gc`; the checkout storage `sessions` sessions leave on
 * the large project, with the default bound and after `keel gc`; the per-turn overhead (reset + 10-file
 * auto commit) on both.
 */
export const bigProjectBench: Bench = {
  name: 'bigproject',
  title: 'Big projects: first request, disk per session, checkout storage, per-turn overhead (issue 36)',
  async run({ sizes, scratch, progress }) {
    const started = performance.now();
    const profile = profileOf(sizes);
    await ensureCliBuilt();
    const dir = scratch.dir('bigproject');
    const stamps: number[] = [];
    const plan: ScriptStep[] = [];
    const server = await new ProviderServer({
      respond: () => {
        stamps.push(performance.now());
        return plan.shift() ?? { kind: 'reply', text: 'ok' };
      },
    }).start();
    const values: Record<string, number> = {};
    try {
      for (const [label, files] of [
        ['small', profile.small],
        ['large', profile.large],
      ] as const) {
        progress(`bigproject: generating the ${files}-file project`);
        const project = join(dir, `project-${label}`);
        buildGitProject(project, files, { aged: true });
        const home = join(dir, `home-${label}`);
        const checkoutFirst: number[] = [];
        const directFirst: number[] = [];
        const viewFirst: number[] = [];
        let lastSession = '';
        let viewSession = '';
        for (let run = 0; run < profile.runs; run += 1) {
          directFirst.push(await keelRun(server, plan, stamps, home, project, 'direct'));
          const beforeView = new Set(readdirSync(join(home, 'sessions')));
          viewFirst.push(await keelRun(server, plan, stamps, home, project, 'view'));
          viewSession = newestSession(home, beforeView);
          const before = new Set(readdirSync(join(home, 'sessions')));
          checkoutFirst.push(await keelRun(server, plan, stamps, home, project, 'checkout'));
          lastSession = newestSession(home, before);
          progress(`bigproject: ${label} first request ${run + 1}/${profile.runs}`);
        }
        values[`${label}.checkout`] = median(checkoutFirst);
        values[`${label}.direct`] = median(directFirst);
        values[`${label}.view`] = median(viewFirst);
        values[`${label}.viewDisk`] = sessionDiskBesidesLog(viewSession);
        values[`${label}.diskAfterTurn`] = sessionDiskBesidesLog(lastSession);
        values[`${label}.turn`] = await turnOverhead(home, lastSession, profile.turns);
        if (label === 'large') {
          for (let session = 0; session < profile.sessions; session += 1) {
            await keelRun(server, plan, stamps, home, project, 'checkout');
            if (session % 10 === 9) progress(`bigproject: ${session + 1}/${profile.sessions} sessions`);
          }
          values['large.storage'] = checkoutStorageOf(home, project);
          await keelGc(home);
          values['large.storageAfterGc'] = checkoutStorageOf(home, project);
          values['large.diskAfterGc'] = sessionDiskBesidesLog(lastSession);
        }
      }
    } finally {
      await server.close();
      scratch.remove(dir);
    }
    const ms = (v: number | undefined) => round(v ?? 0, 1);
    const mb = (v: number | undefined) => round((v ?? 0) / MB, 2);
    return {
      name: this.name,
      title: this.title,
      params: { ...profile, changedFiles: CHANGED },
      metrics: [
        makeMetric(`first request, new session, ${profile.small} files, checkout`, 'ms', 'lower', {
          keel: ms(values['small.checkout']),
        }),
        makeMetric(`first request, new session, ${profile.small} files, --commit direct`, 'ms', 'lower', {
          keel: ms(values['small.direct']),
        }),
        makeMetric(`first request, new session, ${profile.large} files, checkout`, 'ms', 'lower', {
          keel: ms(values['large.checkout']),
        }),
        makeMetric(`first request, new session, ${profile.large} files, --commit direct`, 'ms', 'lower', {
          keel: ms(values['large.direct']),
        }),
        makeMetric(`first request, new session, ${profile.small} files, view`, 'ms', 'lower', {
          keel: ms(values['small.view']),
        }),
        makeMetric(`first request, new session, ${profile.large} files, view`, 'ms', 'lower', {
          keel: ms(values['large.view']),
        }),
        makeMetric(
          `disk added by a one-turn 10-file view session besides its log, ${profile.large} files`,
          'MB',
          'lower',
          {
            keel: mb(values['large.viewDisk']),
          },
        ),
        makeMetric(
          `disk added by a one-turn 10-file session besides its log, ${profile.large} files`,
          'MB',
          'lower',
          {
            keel: mb(values['large.diskAfterTurn']),
          },
        ),
        makeMetric(`the same after keel gc, ${profile.large} files`, 'MB', 'lower', {
          keel: mb(values['large.diskAfterGc']),
        }),
        makeMetric(
          `checkout storage of ${profile.sessions + profile.runs} ended sessions, default bound`,
          'MB',
          'lower',
          {
            keel: mb(values['large.storage']),
          },
        ),
        makeMetric(
          `checkout storage of ${profile.sessions + profile.runs} ended sessions after keel gc`,
          'MB',
          'lower',
          {
            keel: mb(values['large.storageAfterGc']),
          },
        ),
        makeMetric(`per-turn overhead (reset + 10-file auto commit), ${profile.small} files`, 'ms', 'lower', {
          keel: ms(values['small.turn']),
        }),
        makeMetric(`per-turn overhead (reset + 10-file auto commit), ${profile.large} files`, 'ms', 'lower', {
          keel: ms(values['large.turn']),
        }),
      ],
      notes: [
        `Generated git projects of ${profile.small} and ${profile.large} small files (built once per run, files older than the index).`,
        'First request: wall ms from spawning `keel run` (a new session, policy auto-edit) to the scripted provider receiving its first request; median of the runs.',
        `Disk: the session folder without its log (events.sqlite*), after the one turn that wrote ${CHANGED} files; then after \`keel gc --idle-minutes 0\`.`,
        'Storage: every session folder’s checkouts and checkout state plus the project’s .git/worktrees, with the default bound (2 GiB, idle 60 min) and after keel gc.',
        'View: the same `keel run` with the checkout a copy-on-write view (KEEL_CHECKOUT_KIND=view; issue 36), where this machine can mount one.',
        'Per-turn overhead: in process, reset + 10 edits + auto commit of the last session, median after one warm-up turn.',
      ],
      skipped: {},
      durationMs: round(performance.now() - started, 1),
    };
  },
};

/** `keel gc --idle-minutes 0` on `home`. */
async function keelGc(home: string): Promise<void> {
  await runKeelTimed(['--home', home, 'gc', '--idle-minutes', '0']);
}
