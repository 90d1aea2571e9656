import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path, { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { withWritableSession } from '../../../main/core/harness/lock.js';
import { watchBackingFolders } from '../../../main/core/persistent/backingWatch.js';
import { Checkout } from '../../../main/core/persistent/checkout.js';
import { projectFolderOf } from '../../../main/core/persistent/commitRecord.js';
import { beginDirectChanges } from '../../../main/core/persistent/directTurn.js';
import { checkoutLocation } from '../../../main/core/persistent/config.js';
import { diskUsage } from '../../../main/core/persistent/reclaim.js';
import { readGitFacts } from '../../../main/core/prompts/environment.js';
import { lastViewStatusWay } from '../../../main/core/persistent/viewStatus.js';
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
  full: { small: 1_000, large: 80_000, sessions: 100, runs: 3, turns: 9 },
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
  // Issue #36: each kind forced (settings' `auto` is a view where the machine can mount one, else a full copy).
  const { startedAt } = await runKeelTimed(args, { KEEL_CHECKOUT_KIND: mode === 'view' ? 'view' : 'copy' });
  const first = stamps[0];
  if (first === undefined) throw new Error('keel run made no provider request');
  return first - startedAt;
}

/**
 * Issue #36: a continued `keel run --session` turn of `session` (its view reset before the watch the turn starts has
 * walked the project) making `CHANGED` edits one request at a time; the median ms between the scripted provider's
 * later requests (after the first edit: each carries the environment block's status of the view, read from its layers
 * once the reset is checked against the watch, else by `git status`).
 */
async function continuedTurn(
  server: ProviderServer,
  plan: ScriptStep[],
  stamps: number[],
  home: string,
  session: string,
): Promise<{ firstEdit: number; later: number }> {
  plan.length = 0;
  stamps.length = 0;
  const tag = `${Date.now()}`;
  for (let i = 0; i < CHANGED; i += 1)
    plan.push({
      kind: 'reply',
      toolCalls: [
        {
          name: 'write_file',
          arguments: {
            path: `src/d${i}/f${i * 100 + 2}.ts`,
            content: `export const later${i} = '${tag}';\n`,
          },
        },
      ],
    });
  plan.push({ kind: 'reply', text: 'done' });
  const id = path.basename(session);
  await runKeelTimed(['--home', home, 'run', '--session', id, 'ten edits, one at a time'], {
    KEEL_CHECKOUT_KIND: 'view',
  });
  if (stamps.length !== CHANGED + 1) throw new Error(`the continued turn made ${stamps.length} requests`);
  // Apart: the request after the first edit, which also paid the turn's first .env search and may wait for the check.
  return {
    firstEdit: (stamps[1] as number) - (stamps[0] as number),
    later: median(stamps.slice(2).map((at, i) => at - (stamps[i + 1] as number))),
  };
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

/**
 * Bytes a view session holds: its folder besides its log, and its view's worktree admin folder in the project's
 * `.git/worktrees/` (its git index lives there while the view has one).
 */
function viewSessionDisk(dataDir: string): number {
  let admin = 0;
  try {
    const state = JSON.parse(readFileSync(join(dataDir, 'checkouts', 'project', 'state.json'), 'utf8')) as {
      gitDir?: string;
    };
    if (state.gitDir) admin = diskUsage(state.gitDir);
  } catch {
    // No checkout state: nothing in the repository either.
  }
  return sessionDiskBesidesLog(dataDir) + admin;
}

/**
 * Checkout storage of the given sessions: their checkout files, checkout state folders and their worktrees' admin
 * folders in the project's `.git/worktrees/`.
 */
function checkoutStorageOf(dataDirs: readonly string[]): number {
  let total = 0;
  for (const dataDir of dataDirs) {
    const admin = viewSessionDisk(dataDir) - sessionDiskBesidesLog(dataDir);
    total +=
      admin + diskUsage(join(dataDir, 'workspace', 'persistent')) + diskUsage(join(dataDir, 'checkouts'));
  }
  return total;
}

/** A session whose per-turn overhead is measured: its home and data folder. */
type TimedSession = { home: string; dataDir: string };

/**
 * Per-turn overhead of existing sessions in-process (reset, `CHANGED` edits, auto commit), in ms per turn: the
 * median of each session's `turns` turns after a warm-up turn. The sessions take their turns in rotation (one turn
 * each, then the next round), so the small and the large project's figures, compared as a ratio, are taken under the
 * same machine state rather than one block after the other (their ratio moved 4.7x-5.4x between runs taken in blocks).
 */
async function turnOverheads(
  sessions: readonly TimedSession[],
  turns: number,
): Promise<{ turn: number; status: number }[]> {
  const times = sessions.map((): { turn: number[]; status: number[] } => ({ turn: [], status: [] }));
  // The turns of a long-lived host (the app, `keel serve`, the ACP agent), which watches the project folders it
  // snapshots: from its second snapshot of a folder on, a reset stages only what changed (backingWatch.ts).
  watchBackingFolders(true);
  try {
    for (let turn = 0; turn <= turns; turn += 1)
      for (const [index, session] of sessions.entries()) {
        const took = await oneTurn(session, turn);
        // The first turn after `keel run` is a warm-up (git's racily-clean second, the caches, the watcher's start).
        if (turn > 0) {
          times[index]?.turn.push(took.turn);
          times[index]?.status.push(took.status);
        }
      }
  } finally {
    watchBackingFolders(false);
  }
  return times.map((one) => ({ turn: median(one.turn), status: median(one.status) }));
}

/**
 * Per-turn overhead of `--commit direct` sessions in-process, in ms per turn (median after a warm-up turn, the
 * sessions in rotation as above): the segment's start (its tree and protected paths photographed), `CHANGED` edits
 * in the project folder itself, its end (protected paths checked, the end tree, the change recorded with its patch).
 * After the checkouts' turns: these edits change the project folder the checkouts' resets would otherwise see.
 */
async function directOverheads(sessions: readonly TimedSession[], turns: number): Promise<number[]> {
  const times = sessions.map((): number[] => []);
  watchBackingFolders(true);
  try {
    for (let turn = 0; turn <= turns; turn += 1)
      for (const [index, session] of sessions.entries()) {
        const took = await oneDirectTurn(session, turn);
        if (turn > 0) times[index]?.push(took);
      }
  } finally {
    watchBackingFolders(false);
  }
  return times.map((one) => median(one));
}

async function oneDirectTurn({ home, dataDir }: TimedSession, turn: number): Promise<number> {
  const id = dataDir.split('/').pop() as string;
  const t0 = performance.now();
  await withWritableSession(home, id, async (log) => {
    const project = projectFolderOf(log);
    if (project === undefined) throw new Error(`${id}: the direct session has no project folder`);
    await prepareTurn(log, { newTurn: true });
    await beginDirectChanges(log);
    for (let i = 0; i < CHANGED; i += 1)
      writeFileSync(
        join(project, 'src', `d${i}`, `f${i * 100 + 2}.ts`),
        `export const t${turn} = ${i}; // ${id}\n`,
      );
    await finishTurn(log);
    const recorded = log.read({ fromSeq: log.lastSeq() }).at(-1);
    if (recorded?.kind !== 'persistent_commit' || recorded.files.length !== CHANGED)
      throw new Error(`${id} turn ${turn}: the turn's change was ${JSON.stringify(recorded?.kind)}`);
  });
  return performance.now() - t0;
}

/**
 * One turn of a session in-process: reset, `CHANGED` edits through its checkout, auto commit; ms. Apart: the git
 * status of the environment block of a request after the edits (a view's from its layers, a copy's from git).
 */
async function oneTurn(
  { home, dataDir }: TimedSession,
  turn: number,
): Promise<{ turn: number; status: number }> {
  const id = dataDir.split('/').pop() as string;
  const t0 = performance.now();
  let status = 0;
  await withWritableSession(home, id, async (log) => {
    await prepareTurn(log, { newTurn: true });
    const config = persistentConfigOf(log);
    if (!config) throw new Error('the session has no checkout');
    markTurnStarted(log.dir, config);
    const location = checkoutLocation(log.dir, 'project');
    const spec = config.dirs.find((candidate) => candidate.name === 'project');
    const opened = spec && Checkout.existing(spec, location);
    if (!opened) throw new Error('the session has no project checkout');
    // A view's files are written through its holder (the host path is only its mount point).
    const checkout = await opened.mount();
    // Bytes of this session's own: the sessions of one project take their turns in rotation, and the same bytes as the
    // last one committed would be no change (its commit and status then did nothing).
    for (let i = 0; i < CHANGED; i += 1)
      writeFileSync(
        join(checkout, 'src', `d${i}`, `f${i * 100 + 1}.ts`),
        `export const t${turn} = ${i}; // ${id}\n`,
      );
    const asked = performance.now();
    const facts = await readGitFacts(
      { projectFolder: opened.backing, projectRoot: checkout },
      opened.kind === 'view' ? (folder) => opened.status(path.relative(checkout, folder)) : undefined,
    );
    status = performance.now() - asked;
    if (facts.status?.length !== CHANGED)
      throw new Error(
        `${id} (${opened.kind}) turn ${turn}: the status was ${JSON.stringify(facts.status)} (${JSON.stringify(lastViewStatusWay)})`,
      );
    const reports = await finishTurn(log);
    if (reports[0]?.status !== 'committed')
      throw new Error(`${id} turn ${turn}: the commit was ${reports[0]?.status}`);
  });
  return { turn: performance.now() - t0 - status, status };
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
    // The copy and the view session of the small, then the large project, timed side by side (turnOverheads).
    const timed: TimedSession[] = [];
    const directTimed: TimedSession[] = [];
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
        let directSession = '';
        // Direct and view runs alternate; the full copies run after them: a copy of 80,000 files leaves the disk
        // writing back ~320 MB for seconds, which would slow whichever run came next.
        for (let run = 0; run < profile.runs; run += 1) {
          const beforeDirect = new Set(
            existsSync(join(home, 'sessions')) ? readdirSync(join(home, 'sessions')) : [],
          );
          directFirst.push(await keelRun(server, plan, stamps, home, project, 'direct'));
          directSession = newestSession(home, beforeDirect);
          const beforeView = new Set(readdirSync(join(home, 'sessions')));
          viewFirst.push(await keelRun(server, plan, stamps, home, project, 'view'));
          viewSession = newestSession(home, beforeView);
          progress(`bigproject: ${label} first request ${run + 1}/${profile.runs}`);
        }
        values[`${label}.viewDisk`] = viewSessionDisk(viewSession);
        // After its disk is measured, before the copies: the view session's later turns (a continued one-turn host's).
        const continued: { firstEdit: number; later: number }[] = [];
        for (let run = 0; run < profile.runs; run += 1)
          continued.push(await continuedTurn(server, plan, stamps, home, viewSession));
        values[`${label}.continued`] = median(continued.map((one) => one.later));
        values[`${label}.continuedFirst`] = median(continued.map((one) => one.firstEdit));
        for (let run = 0; run < profile.runs; run += 1) {
          const before = new Set(readdirSync(join(home, 'sessions')));
          checkoutFirst.push(await keelRun(server, plan, stamps, home, project, 'checkout'));
          lastSession = newestSession(home, before);
        }
        values[`${label}.checkout`] = median(checkoutFirst);
        values[`${label}.direct`] = median(directFirst);
        values[`${label}.view`] = median(viewFirst);
        values[`${label}.diskAfterTurn`] = sessionDiskBesidesLog(lastSession);
        timed.push({ home, dataDir: lastSession }, { home, dataDir: viewSession });
        directTimed.push({ home, dataDir: directSession });
        if (label === 'large') {
          // Before the sessions below and their `keel gc`, which reclaims these sessions' checkouts.
          const [smallCopy, smallView, largeCopy, largeView] = await turnOverheads(timed, profile.turns);
          Object.assign(values, {
            'small.turn': smallCopy?.turn,
            'small.viewTurn': smallView?.turn,
            'large.turn': largeCopy?.turn,
            'large.viewTurn': largeView?.turn,
            'small.status': smallCopy?.status,
            'small.viewStatus': smallView?.status,
            'large.status': largeCopy?.status,
            'large.viewStatus': largeView?.status,
          });
          const [smallDirect, largeDirect] = await directOverheads(directTimed, profile.turns);
          Object.assign(values, { 'small.directTurn': smallDirect, 'large.directTurn': largeDirect });
          progress('bigproject: per-turn overhead done');
          // The ended sessions are views (the default kind where overlay works): a hundred full copies of 80,000 files
          // would be ~32 GB of scratch, and the copies' storage is measured above (disk per session, after gc).
          const before = new Set(readdirSync(join(home, 'sessions')));
          for (let session = 0; session < profile.sessions; session += 1) {
            await keelRun(server, plan, stamps, home, project, 'view');
            if (session % 10 === 9) progress(`bigproject: ${session + 1}/${profile.sessions} sessions`);
          }
          const ended = readdirSync(join(home, 'sessions'))
            .filter((id) => !before.has(id))
            .map((id) => join(home, 'sessions', id));
          values['large.storage'] = checkoutStorageOf(ended);
          await keelGc(home);
          values['large.storageAfterGc'] = checkoutStorageOf(ended);
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
          `disk added by a one-turn 10-file view session besides its log, ${profile.large} files (its .git/worktrees folder included)`,
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
          `checkout storage of ${profile.sessions} ended view sessions, ${profile.large} files, default bound`,
          'MB',
          'lower',
          {
            keel: mb(values['large.storage']),
          },
        ),
        makeMetric(
          `checkout storage of ${profile.sessions} ended view sessions, ${profile.large} files, after keel gc`,
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
        makeMetric(
          `per-turn overhead (reset + 10-file auto commit), ${profile.small} files, view`,
          'ms',
          'lower',
          { keel: ms(values['small.viewTurn']) },
        ),
        makeMetric(
          `per-turn overhead (reset + 10-file auto commit), ${profile.large} files, view`,
          'ms',
          'lower',
          { keel: ms(values['large.viewTurn']) },
        ),
        ...(['small', 'large'] as const).map((label) =>
          makeMetric(
            `per-turn overhead (segment start + 10 edits + end and record), ${profile[label]} files, --commit direct`,
            'ms',
            'lower',
            { keel: ms(values[`${label}.directTurn`]) },
          ),
        ),
        ...(['small', 'large'] as const).flatMap((label) => [
          makeMetric(
            `environment block git status after 10 edits, ${profile[label]} files, view`,
            'ms',
            'lower',
            { keel: ms(values[`${label}.viewStatus`]) },
          ),
          makeMetric(`environment block git status after 10 edits, ${profile[label]} files`, 'ms', 'lower', {
            keel: ms(values[`${label}.status`]),
          }),
        ]),
        ...(['small', 'large'] as const).flatMap((label) => [
          makeMetric(
            `later request of a continued keel run --session turn, ${profile[label]} files, view`,
            'ms',
            'lower',
            { keel: ms(values[`${label}.continued`]) },
          ),
          makeMetric(
            `request after the first edit of a continued keel run --session turn, ${profile[label]} files, view`,
            'ms',
            'lower',
            { keel: ms(values[`${label}.continuedFirst`]) },
          ),
        ]),
      ],
      notes: [
        `Generated git projects of ${profile.small} and ${profile.large} small files (built once per run, files older than the index).`,
        'First request: wall ms from spawning `keel run` (a new session, policy auto-edit) to the scripted provider receiving its first request; median of the runs (direct and view alternating, the full copies after them).',
        `Disk: the session folder without its log (events.sqlite*), after the one turn that wrote ${CHANGED} files; then after \`keel gc --idle-minutes 0\`.`,
        `Storage: ${profile.sessions} one-turn view sessions made one after another (KEEL_CHECKOUT_KIND=view), each session's checkout, checkout state and worktree admin folder in the project's .git/worktrees, with the default bound (2 GiB, idle 60 min) and after keel gc. Nothing is shared between sessions (no per-project store), so there is no once-per-project cost to report.`,
        'View: the same `keel run` with the checkout a copy-on-write view (KEEL_CHECKOUT_KIND=view; issue 36), where this machine can mount one.',
        "Environment block: the git status a request after the turn's 10 edits carries (prompts/environment.ts readGitFacts), timed apart from the per-turn overhead in the same turns: a view's from its upper layer and the baseline tree while the watcher vouches for the project folder (viewStatus.ts), a copy's from `git status`; median.",
        `Later request of a continued turn: \`keel run --session\` of the view session (a one-turn host: its reset comes before the watch it starts has walked the project), ${CHANGED} write_file calls one request at a time; ms between the scripted provider's requests from the second after the first edit on (each carries the environment block's status), median within a run, median of the runs; apart, the request after the first edit (the turn's first .env search, and the check of the reset against the watch if it is not done yet: the scripted model answers at once, a real one gives it its time).`,
        "Per-turn overhead, --commit direct: in process, the last direct session of each project (the two in rotation, after the checkouts' turns): the segment start (its tree and protected paths), 10 edits in the project folder, the segment end (protected paths checked, its tree, the change recorded); in a long-lived host both trees are staged from the watcher (the end only where writes through shared memory maps are watched too: closeWrites.ts); median after one warm-up turn.",
        'Per-turn overhead: in process, reset + 10 edits + auto commit of the last copy session and of the last view session of each project (a view keeps its indexes between turns while its session is in use; they go when its views are let go), the four sessions taking their turns in rotation so both projects are timed under the same machine state; median after one warm-up turn.',
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
