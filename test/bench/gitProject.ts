import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A git repository of `count` small files (`src/d<i/100>/f<i>.ts`) in folders of 100, committed once: the
 * project the `sessions` and `history` benches check out, commit and revert in.
 */
export function buildGitProject(dir: string, count: number, options: { aged?: boolean } = {}): void {
  mkdirSync(dir, { recursive: true });
  const past = new Date(Date.now() - 3_600_000);
  for (let i = 0; i < count; i++) {
    const folder = join(dir, 'src', `d${Math.floor(i / 100)}`);
    if (i % 100 === 0) mkdirSync(folder, { recursive: true });
    const file = join(folder, `f${i}.ts`);
    writeFileSync(file, `export const value${i} = ${i};\n`);
    if (options.aged) utimesSync(file, past, past);
  }
  // A project's files and folders are older than its index, as in a real checkout: written this second, each
  // file would be "racily clean" to git (its mtime not before the index's) and hashed again by every status.
  if (options.aged)
    for (const folder of [join(dir, 'src'), ...readdirSync(join(dir, 'src')).map((d) => join(dir, 'src', d))])
      utimesSync(folder, past, past);
  // gc.auto=0 and a gc of its own: the commit of thousands of loose objects otherwise starts a detached `gc --auto`
  // that repacks behind the measurements (a second core's worth of noise, a repository changing under them). Packed,
  // as a real project's history is.
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=b@b', '-c', 'gc.auto=0', ...args], {
      cwd: dir,
      stdio: 'ignore',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'fixture');
  git('gc', '-q');
}
