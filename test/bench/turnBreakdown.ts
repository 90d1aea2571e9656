// Issue #36: where a view's per-turn time goes on a generated project (not a bench of `npm run bench`: a probe run by
// hand, whose figures are in main/core/persistent/README.md). Usage, after `npx tsc -p tsconfig.lib.json`:
//   KEEL_CHECKOUT_KIND=view node dist/test/bench/turnBreakdown.js <files> [<scratch folder>] (KEEL_BREAKDOWN_WATCH=0:
// without the watcher of backingWatch.ts)
// The project is built once in the scratch folder (`<files>` small files in folders of 100) and kept for the next run.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { watchBackingFolders } from '../../main/core/persistent/backingWatch.js';
import { Checkout } from '../../main/core/persistent/checkout.js';
import { stopAllViews } from '../../main/core/persistent/viewHolder.js';
import { findEnvFiles } from '../../main/sandbox/envFiles.js';
import { readGitFacts } from '../../main/core/prompts/environment.js';
import { buildGitProject } from './gitProject.js';

const TURNS = 7;
const CHANGED = 10;

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** Median ms of `runs` calls of `work`, each after an untimed `before`. */
function timed(work: () => void, before: () => void = () => undefined, runs = 5): string {
  const times: number[] = [];
  for (let run = 0; run < runs; run += 1) {
    before();
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  return median(times).toFixed(1);
}

/** Turns of an existing view: reset, `CHANGED` files written through its holder, auto commit, thinned or not. */
async function turns(
  checkout: Checkout,
  artifactsDir: string,
  thin: boolean,
): Promise<Record<string, string>> {
  const rows: Record<string, number[]> = { reset: [], commit: [], thin: [], total: [], status: [] };
  for (let turn = 0; turn <= TURNS; turn += 1) {
    const started = performance.now();
    await checkout.reset();
    const reset = performance.now();
    const root = await checkout.mount();
    Checkout.markDirty(checkout.location);
    for (let i = 0; i < CHANGED; i += 1)
      fs.writeFileSync(
        path.join(root, 'src', `d${i}`, `f${i * 100 + 1}.ts`),
        `export const t${turn} = ${thin};\n`,
      );
    // The environment block of the turn's later requests: the view's `git status` after the writes (not in total).
    const asked = performance.now();
    // As a host asks it: the view's own status first (viewStatus.ts), git when that cannot answer.
    const facts = await readGitFacts({ projectFolder: checkout.backing, projectRoot: root }, () =>
      checkout.status(''),
    );
    if (facts.status?.length !== CHANGED)
      throw new Error(`turn ${turn}: status ${JSON.stringify(facts.status)}`);
    const statusTime = performance.now() - asked;
    const written = performance.now();
    const report = await checkout.commit({ artifactsDir, artifactStem: `${String(thin)}-${turn}` });
    if (report.status !== 'committed') throw new Error(`turn ${turn}: the commit was ${report.status}`);
    const committed = performance.now();
    if (thin) await checkout.thin();
    const ended = performance.now();
    // The first turn is a warm-up (caches, git's racily-clean second).
    if (turn === 0) continue;
    rows['reset']?.push(reset - started);
    rows['commit']?.push(committed - written);
    rows['thin']?.push(ended - committed);
    rows['total']?.push(ended - started - statusTime);
    rows['status']?.push(statusTime);
  }
  return Object.fromEntries(Object.entries(rows).map(([name, values]) => [name, median(values).toFixed(1)]));
}

async function main(): Promise<void> {
  // As the app and `keel serve` do (a long-lived host); KEEL_BREAKDOWN_WATCH=0 measures the stat pass instead.
  watchBackingFolders(process.env['KEEL_BREAKDOWN_WATCH'] !== '0');
  const files = Number(process.argv[2] ?? 80_000);
  const scratch = process.argv[3] ?? path.join('/tmp', `keel-turn-breakdown-${files}`);
  const backing = path.join(scratch, 'project');
  if (!fs.existsSync(backing)) buildGitProject(backing, files, { aged: true });
  const home = fs.mkdtempSync(path.join(scratch, 'home-'));
  const location = {
    workspaceRoot: path.join(home, 's1', 'workspace'),
    checkout: path.join(home, 's1', 'workspace', 'persistent', 'project'),
    stateDir: path.join(home, 's1', 'checkouts', 'project'),
    locksRoot: path.join(home, 'locks'),
  };
  try {
    const checkout = await Checkout.open({ name: 'project', path: backing, commit: 'auto' }, location, {
      kind: 'view',
    });
    if (checkout.kind !== 'view') throw new Error(`the checkout is a ${checkout.kind}, not a view`);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const artifactsDir = path.join(home, 'artifacts');
    console.log(`${files} files, view, ms per turn (median of ${TURNS})`);
    console.log('thinned after each turn', await turns(checkout, artifactsDir, true));
    console.log('indexes kept', await turns(checkout, artifactsDir, false));
    // The O(files) parts alone: git over a copy of the private index, and the patch redaction's .env search.
    const index = path.join(scratch, 'probe.index');
    fs.copyFileSync(path.join(location.stateDir, 'backing.index'), index);
    // A watched private index is split (sharedIndex.ts): git finds its shared part beside it.
    for (const name of fs.readdirSync(location.stateDir))
      if (name.startsWith('sharedindex.'))
        fs.copyFileSync(path.join(location.stateDir, name), path.join(scratch, name));
    const git =
      (...args: string[]) =>
      (): void => {
        try {
          execFileSync('git', ['-c', 'core.untrackedCache=true', ...args], {
            cwd: backing,
            env: { ...process.env, GIT_INDEX_FILE: index },
            stdio: 'ignore',
          });
        } catch (error) {
          // check-ignore exits 1 when nothing is ignored.
          if ((error as { status?: number }).status !== 1) throw error;
        }
      };
    const changed = Array.from({ length: CHANGED }, (_, i) => `src/d${i}/f${i * 100 + 1}.ts`);
    // The project's own files changed between runs (it is this probe's generated project), as a turn changes them.
    let edits = 0;
    const edit = () => {
      edits += 1;
      for (const file of changed)
        fs.writeFileSync(path.join(backing, file), `export const edit = ${edits};\n`);
    };
    console.log('add -A -v -- . (the stat pass)', timed(git('add', '-A', '-v', '--', '.')));
    console.log(`add -A -v -- <${CHANGED} paths>`, timed(git('add', '-A', '-v', '--', ...changed), edit));
    console.log('check-ignore (reads the index)', timed(git('check-ignore', '--', 'nothing')));
    console.log(
      `update-index of ${CHANGED} paths`,
      timed(git('update-index', '--add', '--remove', '--', ...changed), edit),
    );
    console.log(
      'findEnvFiles of the project',
      timed(() => void findEnvFiles(backing)),
    );
    console.log('index bytes', fs.statSync(index).size);
  } finally {
    await stopAllViews();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
