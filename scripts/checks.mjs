#!/usr/bin/env node
/*
 * Run by `npm test` before `vitest run`: `npm run typecheck`, `npm run lint` and `npm run build` at the same time.
 * They read the same sources and write nothing the others read (lint and Prettier ignore dist/ and out/), and
 * each is one single-threaded process, so on CI's 2-core machine side by side they take ~1.5 min instead of
 * ~3 min one after another. Each one's output is printed whole when it ends (never interleaved); the exit code
 * is the first failing one's, after all have ended, so every failure is shown at once.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import process from 'node:process';

const SCRIPTS = ['typecheck', 'lint', 'build'];
const npm = process.env.npm_execpath;

const results = await Promise.all(
  SCRIPTS.map(
    (script) =>
      new Promise((resolve) => {
        const started = Date.now();
        // Through the npm that runs us when there is one (npm_execpath), so the same npm runs each script.
        const child = npm
          ? spawn(process.execPath, [npm, 'run', script], { stdio: ['ignore', 'pipe', 'pipe'] })
          : spawn('npm', ['run', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        const output = [];
        child.stdout.on('data', (chunk) => output.push(chunk));
        child.stderr.on('data', (chunk) => output.push(chunk));
        child.on('error', (error) =>
          output.push(Buffer.from(`cannot start npm run ${script}: ${error.message}\n`)),
        );
        child.on('close', (code, signal) => {
          const seconds = ((Date.now() - started) / 1000).toFixed(1);
          process.stdout.write(Buffer.concat(output));
          const status = code ?? 1;
          process.stdout.write(
            `\nnpm run ${script}: ${status === 0 ? 'ok' : `failed (${signal ?? `exit ${status}`})`} in ${seconds} s\n`,
          );
          resolve(status);
        });
      }),
  ),
);
process.exitCode = results.find((status) => status !== 0) ?? 0;
