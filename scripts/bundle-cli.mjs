#!/usr/bin/env node
/*
 * Bundles the compiled CLI (dist/main/cli/bin.js, from `tsc -p tsconfig.lib.json`) into dist/cli/: one file per
 * lazily loaded command instead of ~600 modules. Node 20 reads, resolves and links each ES module on its own, so
 * every `keel` spawn spent ~0.35 s of CPU before doing anything; bundled it is ~0.2 s (test/bench `cli-start`),
 * which is the price of every command a person types and of each of the test suite's spawns.
 *
 * Left outside the bundle, loaded from node_modules as before:
 * - native modules (better-sqlite3, node-pty, node-llama-cpp): their binaries are found relative to the package;
 * - what a command loads only when it uses it (the provider SDKs, the MCP and ACP SDKs, ajv, ws), so start-up
 *   stays as light as test/main/cli/startup.test.ts requires and that test still sees them by package name.
 * The local model's worker (main/providers/local/worker.ts) is an entry of its own: the host starts it by a path
 * next to the module that asks (`new URL('./worker.js', import.meta.url)`), which in the bundle is dist/cli/.
 */
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist', 'cli');

/** Packages kept as imports (see above). */
export const EXTERNAL = [
  'better-sqlite3',
  'node-pty',
  'node-llama-cpp',
  'koffi',
  '@anthropic-ai/sdk',
  'openai',
  '@modelcontextprotocol/sdk',
  '@agentclientprotocol/sdk',
  'ajv',
  'ws',
];

const external = (id) =>
  id.startsWith('node:') || EXTERNAL.some((name) => id === name || id.startsWith(`${name}/`));

const started = Date.now();
const bundle = await rolldown({
  input: {
    bin: path.join(ROOT, 'dist/main/cli/bin.js'),
    worker: path.join(ROOT, 'dist/main/providers/local/worker.js'),
  },
  platform: 'node',
  external,
  logLevel: 'warn',
});
// Written next to the old files, then swapped in: a test spawning dist/cli/bin.js never sees half a bundle.
const next = `${OUT}.next-${process.pid}`;
fs.rmSync(next, { recursive: true, force: true });
await bundle.write({ dir: next, format: 'esm', sourcemap: true, entryFileNames: '[name].js' });
await bundle.close();
const old = `${OUT}.old-${process.pid}`;
if (fs.existsSync(OUT)) fs.renameSync(OUT, old);
fs.renameSync(next, OUT);
fs.rmSync(old, { recursive: true, force: true });
process.stdout.write(`bundled the CLI into ${path.relative(ROOT, OUT)}/ in ${Date.now() - started} ms\n`);
