import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { trackChild } from '../../../support/childProcesses.js';

const REGISTER = path.join(import.meta.dirname, 'registerTypescript.mjs');

/** Starts `node <script.ts> ...args` in a real child process that runs the repo's TypeScript directly; tracked. */
export function spawnTypescript(script: string, args: readonly string[]): ChildProcess {
  return trackChild(
    spawn(process.execPath, ['--import', REGISTER, script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** Resolves with the first stdout line matching `pattern`; rejects if the child exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    let stderr = '';
    const onData = (chunk: Buffer): void => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      const found = lines.find((line) => pattern.test(line));
      if (found !== undefined) {
        child.stdout?.off('data', onData);
        resolve(found);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('exit', (code, signal) =>
      reject(new Error(`child exited (${code ?? signal}) before printing ${pattern}: ${stderr}`)),
    );
  });
}

/** Resolves when the child has exited, with its exit code or signal. */
export function waitForExit(child: ChildProcess): Promise<number | NodeJS.Signals | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode ?? child.signalCode);
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
}
