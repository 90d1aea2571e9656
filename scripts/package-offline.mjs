#!/usr/bin/env node
// Packages Keel for Linux as an unpacked folder (`electron-builder --dir`) without downloading Electron, then checks
// what went into app.asar. The Electron binary is a stub carrying a real fuse wire, so `files`, `asarUnpack`, the
// beforePack hook and the fuses are all exercised; the result cannot be launched. Works offline (STACK.md).
//
//   node scripts/package-offline.mjs [--skip-build] [--work-dir DIR] [--json]
//     --skip-build    use the existing out/ (run `electron-vite build` otherwise)
//     --work-dir DIR  stage and package in DIR (must not exist or be empty); default: a new temp folder, kept
//     --json          print the summary as JSON on the last line
//
// Everything happens in a staged copy of the project, so the repo's release/ and .native/ are never written. When
// no Electron build of better-sqlite3 exists (CI), the Node build stands in for it: same file, same place, wrong ABI.
import { Buffer } from 'node:buffer';
import console from 'node:console';
import process from 'node:process';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { betterSqliteBinary, nativeDirFor, readElectronVersion } from './native-layout.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

function log(message) {
  console.log(`[package-offline] ${message}`);
}

function parseArgs(args) {
  const options = { skipBuild: false, workDir: undefined, json: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--skip-build') options.skipBuild = true;
    else if (arg === '--json') options.json = true;
    else if (arg === '--work-dir' && args[i + 1]) options.workDir = resolve(args[++i]);
    else throw new Error(`Unknown option ${arg} (known: --skip-build, --work-dir DIR, --json).`);
  }
  return options;
}

function run(command, args, cwd) {
  const started = Date.now();
  const result = spawnSync(command, args, { cwd, stdio: 'inherit', env: process.env });
  if (result.status !== 0) {
    throw new Error(
      `${relative(repoRoot, args[0]) || command} ${args.slice(1).join(' ')} failed (exit ${result.status}).`,
    );
  }
  return (Date.now() - started) / 1000;
}

/**
 * A stand-in for Electron's Linux binary: a shell script followed by @electron/fuses' sentinel and a V1 fuse wire
 * holding Electron's defaults, so electron-builder's fuse flipping runs for real and can be read back.
 */
function writeStubElectron(dir, electronVersion) {
  mkdirSync(join(dir, 'resources'), { recursive: true });
  const script = Buffer.from(
    '#!/bin/sh\necho "Keel offline package check: stub Electron, not runnable." >&2\nexit 1\n',
  );
  const sentinel = Buffer.from('dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX', 'ascii');
  // RunAsNode, CookieEncryption, NodeOptions, NodeCliInspect, AsarIntegrity, OnlyLoadAppFromAsar, V8Snapshot, FileProtocol
  const defaults = '10110001';
  const wire = Buffer.concat([Buffer.from([1, defaults.length]), Buffer.from(defaults, 'ascii')]);
  writeFileSync(join(dir, 'electron'), Buffer.concat([script, sentinel, wire, Buffer.from('\n')]), {
    mode: 0o755,
  });
  writeFileSync(join(dir, 'version'), electronVersion);
}

/** Copies what electron-builder reads into `project`, linking node_modules instead of copying it. */
function stageProject(project, electronVersion) {
  mkdirSync(join(project, 'scripts'), { recursive: true });
  for (const file of ['package.json', 'package-lock.json', 'electron-builder.yml']) {
    cpSync(join(repoRoot, file), join(project, file));
  }
  for (const file of ['before-pack.mjs', 'native-layout.mjs']) {
    cpSync(join(repoRoot, 'scripts', file), join(project, 'scripts', file));
  }
  cpSync(join(repoRoot, 'out'), join(project, 'out'), { recursive: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(project, 'node_modules'), 'dir');

  const electronBuild = join(repoRoot, nativeDirFor(electronVersion), betterSqliteBinary);
  const nodeBuild = join(repoRoot, 'node_modules', 'better-sqlite3', 'build', 'Release', betterSqliteBinary);
  const standIn = !existsSync(electronBuild);
  if (standIn && !existsSync(nodeBuild)) throw new Error(`Neither ${electronBuild} nor ${nodeBuild} exists.`);
  const target = join(project, nativeDirFor(electronVersion), betterSqliteBinary);
  mkdirSync(dirname(target), { recursive: true });
  cpSync(standIn ? nodeBuild : electronBuild, target);
  if (standIn)
    log(`no Electron build of better-sqlite3: the Node build stands in for it (layout check only)`);
  return { standIn };
}

function listUnpacked(dir) {
  const files = [];
  const walk = (folder) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(relative(dir, path));
    }
  };
  if (existsSync(dir)) walk(dir);
  return files.sort();
}

/** Reads the fuse wire back from the packaged executable. */
async function readFuses(executable) {
  const { getCurrentFuseWire, FuseV1Options } = require('@electron/fuses');
  const wire = await getCurrentFuseWire(executable);
  const names = {};
  for (const [key, value] of Object.entries(wire)) {
    if (key === 'version') continue;
    const name = FuseV1Options[Number(key)];
    if (name !== undefined) names[name] = value === 49 ? 'on' : value === 48 ? 'off' : `state ${value}`;
  }
  return names;
}

/** Rules the archive must satisfy; each violation is a path a person can look up. */
function findViolations(files, unpacked) {
  const violations = [];
  for (const file of files) {
    if (/\.map$/.test(file)) violations.push(`source map: ${file}`);
    if (/\.(ts|tsx|mts|cts)$/.test(file)) violations.push(`TypeScript: ${file}`);
    if (/(^|\/)(test|tests|__tests__)\/|\.(test|spec)\.[cm]?js$|(^|\/)test(-[\w-]+)?\.js$/.test(file)) {
      violations.push(`test file: ${file}`);
    }
    if (/^\/node_modules\/(react|react-dom|monaco-editor|@xterm|electron|vite)\//.test(`${file}/`)) {
      violations.push(`renderer-only or build-only package: ${file}`);
    }
  }
  const packedNative = files.filter((file) => file.endsWith('.node') && !unpacked.includes(file.slice(1)));
  for (const file of packedNative) violations.push(`native module left inside app.asar: ${file}`);
  return violations;
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const electronVersion = readElectronVersion(repoRoot);
  const timings = {};

  if (!options.skipBuild) {
    log('building with electron-vite');
    timings.electronViteBuild = run(
      process.execPath,
      [join(repoRoot, 'node_modules/electron-vite/bin/electron-vite.js'), 'build'],
      repoRoot,
    );
  }
  if (!existsSync(join(repoRoot, 'out', 'main', 'index.js'))) {
    throw new Error('out/main/index.js is missing: run `npx electron-vite build` (or drop --skip-build).');
  }

  const workDir = options.workDir ?? mkdtempSync(join(tmpdir(), 'keel-package-'));
  mkdirSync(workDir, { recursive: true });
  if (readdirSync(workDir).length > 0) throw new Error(`--work-dir ${workDir} is not empty.`);
  const project = join(workDir, 'project');
  const electronDist = join(workDir, 'electron-dist');
  const output = join(workDir, 'release');
  log(`staging in ${workDir}`);
  writeStubElectron(electronDist, electronVersion);
  const { standIn } = stageProject(project, electronVersion);

  log('running electron-builder --dir --linux with the stub Electron');
  timings.electronBuilder = run(
    process.execPath,
    [
      require.resolve('electron-builder/cli.js'),
      '--dir',
      '--linux',
      '--projectDir',
      project,
      '-c.npmRebuild=false',
      `-c.electronDist=${electronDist}`,
      `-c.directories.output=${output}`,
    ],
    project,
  );

  const appOutDir = join(output, 'linux-unpacked');
  const archive = join(appOutDir, 'resources', 'app.asar');
  if (!existsSync(archive)) throw new Error(`electron-builder finished but ${archive} does not exist.`);
  const asar = require('@electron/asar');
  const files = asar.listPackage(archive, { isPack: false });
  const unpackedDir = `${archive}.unpacked`;
  const unpacked = listUnpacked(unpackedDir);
  const unpackedBytes = unpacked.reduce((sum, file) => sum + statSync(join(unpackedDir, file)).size, 0);
  const fuses = await readFuses(join(appOutDir, 'keel'));
  const violations = findViolations(files, unpacked);

  const summary = {
    workDir,
    appOutDir,
    archive,
    archiveBytes: statSync(archive).size,
    fileCount: files.length,
    unpackedDir,
    unpacked,
    unpackedBytes,
    fuses,
    nativeStandIn: standIn,
    timings,
    violations,
  };
  log(`app.asar: ${(summary.archiveBytes / 1e6).toFixed(1)} MB, ${files.length} entries`);
  log(`app.asar.unpacked: ${unpacked.length} files, ${(unpackedBytes / 1e6).toFixed(1)} MB`);
  for (const file of unpacked.filter((path) => path.endsWith('.node'))) log(`  unpacked native: ${file}`);
  log(
    `fuses: ${Object.entries(fuses)
      .map(([name, state]) => `${name}=${state}`)
      .join(', ')}`,
  );
  for (const violation of violations) log(`VIOLATION ${violation}`);
  log(`output kept in ${workDir}`);
  if (options.json) console.log(JSON.stringify(summary));
  if (violations.length > 0) process.exitCode = 1;
}

try {
  await main();
} catch (error) {
  console.error(`[package-offline] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
