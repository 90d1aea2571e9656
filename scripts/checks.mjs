#!/usr/bin/env node
/*
 * Run by `npm test` before `vitest run`: `npm run typecheck`, `npm run lint` and `npm run build` at the same time.
 * They read the same sources and write nothing the others read (lint and Prettier ignore dist/ and out/), and
 * each is one single-threaded process, so on CI's 2-core machine side by side they take ~1.5 min instead of
 * ~3 min one after another. Each one's output is printed whole when it ends (never interleaved); the exit code
 * is the first failing one's, after all have ended, so every failure is shown at once.
 *
 * With KEEL_REBUILD_NATIVE=1 (.ci/run, after `npm ci --ignore-scripts`) `npm rebuild` runs beside them: the
 * dependencies' install scripts, of which better-sqlite3's compile from source (~50 s on one core: its prebuilt
 * binaries come from GitHub, unreachable in CI) is nearly all. None of the three loads a native module, and the
 * tests that do start only once this script has ended.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import process from 'node:process';

/** Each job: its name in the closing line and npm's arguments. */
const JOBS = [
  ...['typecheck', 'lint', 'build'].map((script) => ({ name: `npm run ${script}`, args: ['run', script] })),
  ...(process.env.KEEL_REBUILD_NATIVE === '1' ? [{ name: 'npm rebuild', args: ['rebuild'] }] : []),
];
const npm = process.env.npm_execpath;

const results = await Promise.all(
  JOBS.map(
    ({ name, args }) =>
      new Promise((resolve) => {
        const started = Date.now();
        // Through the npm that runs us when there is one (npm_execpath), so the same npm runs each script.
        const child = npm
          ? spawn(process.execPath, [npm, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
          : spawn('npm', args, { stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
        child.on('error', (error) => output.push(Buffer.from(`cannot start ${name}: ${error.message}\n`)));
        child.on('close', (code, signal) => {
          const seconds = ((Date.now() - started) / 1000).toFixed(1);
          process.stdout.write(Buffer.concat(output));
          const status = code ?? 1;
          process.stdout.write(
            `\n${name}: ${status === 0 ? 'ok' : `failed (${signal ?? `exit ${status}`})`} in ${seconds} s\n`,
          );
          resolve(status);
        });
      }),
  ),
);
process.exitCode = results.find((status) => status !== 0) ?? 0;
