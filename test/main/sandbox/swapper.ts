// The adversary of a symlink-race test: a second Node process running `script` (a sync loop of renames and
// symlinks that prints "ready", then "swaps N" now and then), tracked so a failing test never leaves it running.
import { spawn } from 'node:child_process';
import { trackChild } from '../../support/childProcesses.js';

/** A running swapper. */
export type Swapper = {
  /** SIGKILLs it (by its own pid), waits for its exit, and returns the most swaps it reported. */
  stop(): Promise<number>;
};

/** Starts `script` with `args` (`process.argv.slice(1)` in it); resolves once it printed "ready". */
export function startSwapper(script: string, args: readonly string[]): Promise<Swapper> {
  const child = trackChild(
    spawn(process.execPath, ['-e', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] }),
  );
  let output = '';
  const swapper: Swapper = {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGKILL');
        await exited;
      }
      const counts = [...output.matchAll(/swaps (\d+)/g)].map((match) => Number(match[1]));
      return counts.length > 0 ? Math.max(...counts) : 0;
    },
  };
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready')) resolve(swapper);
    });
  });
}
