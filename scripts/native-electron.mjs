#!/usr/bin/env node
// Builds better-sqlite3 for Electron's ABI into .native/electron-<version>/, beside (never instead of) the Node build
// that `npm ci` made in node_modules, so `npm start` and `npm test` both work with no rebuild ping-pong.
// Run by `npm start`, `npm run dev` and packaging. CI never runs it (it needs Electron's headers from the internet).
//
//   node scripts/native-electron.mjs            build if absent or stale, else do nothing
//   node scripts/native-electron.mjs --dry-run  print the node-gyp command and environment it would use, as JSON
//   node scripts/native-electron.mjs --force    rebuild even if a build is present
//   KEEL_SKIP_NATIVE_ELECTRON=1                 skip entirely (the app then cannot open its database)
//   KEEL_ELECTRON_HEADERS_URL=<url>             a mirror of https://electronjs.org/headers
//   KEEL_ELECTRON_GYP_DIR=<dir>                 where Electron's headers are cached (default ~/.electron-gyp)
import console from 'node:console';
import process from 'node:process';
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  betterSqliteBinary,
  nativeDirFor,
  readBetterSqliteVersion,
  readElectronVersion,
} from './native-layout.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const defaultHeadersUrl = 'https://electronjs.org/headers';

// npm exports every config key as npm_config_<key>, and node-gyp lets those override its command line. ~/.npmrc's
// `nodedir=/usr` would then compile against Node's headers and *look* fine (STACK.md). Only network settings pass.
const keptNpmConfig = new Set([
  'proxy',
  'https_proxy',
  'http_proxy',
  'noproxy',
  'no_proxy',
  'cafile',
  'strict_ssl',
  'python',
  'jobs',
]);

function log(message) {
  console.log(`[native-electron] ${message}`);
}

/** The environment for node-gyp: the caller's, minus every npm/node-gyp setting that could retarget the build. */
function cleanBuildEnv(env) {
  const clean = {};
  const removed = [];
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const npmConfig = /^npm_config_(.*)$/i.exec(key);
    const packageConfig = /^npm_package_config_node_gyp_/i.test(key);
    const bare = /^(nodedir|node_gyp_nodedir)$/i.test(key);
    if (packageConfig || bare || (npmConfig && !keptNpmConfig.has(npmConfig[1].toLowerCase()))) {
      removed.push(key);
      continue;
    }
    clean[key] = value;
  }
  return { env: clean, removed };
}

/** Finds a node-gyp to run: the project's, else the one npm bundles. Returns its JS entry point. */
function findNodeGyp(env) {
  const candidates = [
    join(repoRoot, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    env.npm_config_node_gyp,
    env.npm_execpath &&
      join(dirname(env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'),
    join(
      dirname(process.execPath),
      '..',
      'lib',
      'node_modules',
      'npm',
      'node_modules',
      'node-gyp',
      'bin',
      'node-gyp.js',
    ),
  ];
  const found = candidates.find((candidate) => candidate && existsSync(candidate));
  if (!found) {
    throw new Error(
      'No node-gyp found (looked in node_modules and beside npm). Install build tools: `npm i -g node-gyp`.',
    );
  }
  return found;
}

/** What a build would do: the output paths, the exact node-gyp argv and the environment it runs with. */
function planBuild(env = process.env) {
  const electronVersion = readElectronVersion(repoRoot);
  const betterSqliteVersion = readBetterSqliteVersion(repoRoot);
  const outputDir = join(repoRoot, nativeDirFor(electronVersion));
  const headersUrl = env.KEEL_ELECTRON_HEADERS_URL || defaultHeadersUrl;
  const devDir = env.KEEL_ELECTRON_GYP_DIR || join(homedir(), '.electron-gyp');
  const { env: buildEnv, removed } = cleanBuildEnv(env);
  const argv = [
    process.execPath,
    findNodeGyp(env),
    'rebuild',
    '--release',
    `--target=${electronVersion}`,
    `--dist-url=${headersUrl}`,
    '--runtime=electron',
    `--arch=${process.arch}`,
    // Electron's headers get their own cache so they never mix with Node's.
    `--devdir=${devDir}`,
  ];
  return {
    electronVersion,
    betterSqliteVersion,
    outputDir,
    output: join(outputDir, betterSqliteBinary),
    headersUrl,
    devDir,
    stamp: join(outputDir, 'build.json'),
    argv,
    env: buildEnv,
    removedEnv: removed,
  };
}

function isUpToDate(plan) {
  if (!existsSync(plan.output) || !existsSync(plan.stamp)) return false;
  try {
    const stamp = JSON.parse(readFileSync(plan.stamp, 'utf8'));
    return stamp.electron === plan.electronVersion && stamp.betterSqlite3 === plan.betterSqliteVersion;
  } catch {
    return false;
  }
}

/**
 * Fails fast, in one readable paragraph, when Electron's headers are neither cached nor reachable. Skipped behind a
 * proxy: Node's fetch ignores proxy settings that node-gyp honours, so there node-gyp itself must try.
 */
async function checkHeadersReachable(plan, env) {
  const cached = existsSync(join(plan.devDir, plan.electronVersion, 'installVersion'));
  const proxied = ['https_proxy', 'HTTPS_PROXY', 'npm_config_https_proxy', 'npm_config_proxy'].some(
    (key) => env[key],
  );
  if (cached || proxied) return;
  const url = `${plan.headersUrl}/v${plan.electronVersion}/node-v${plan.electronVersion}-headers.tar.gz`;
  log(`checking that Electron's headers can be downloaded: ${url}`);
  try {
    const response = await globalThis.fetch(url, {
      method: 'HEAD',
      redirect: 'follow',
      signal: globalThis.AbortSignal.timeout(15_000),
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  } catch (error) {
    const reason = error instanceof Error ? (error.cause?.message ?? error.message) : String(error);
    throw new Error(
      `Cannot download Electron ${plan.electronVersion}'s headers (${reason}).\n` +
        '  Building better-sqlite3 for Electron needs them once (they are then cached in ' +
        `${plan.devDir}).\n` +
        '  Connect to the internet (or set KEEL_ELECTRON_HEADERS_URL to a mirror) and run\n' +
        '  `node scripts/native-electron.mjs` again. KEEL_SKIP_NATIVE_ELECTRON=1 skips this step,\n' +
        '  but the app then cannot open its database. Node-only work (`npm test`, the keel CLI) does not need it.',
    );
  }
}

/** Removes builds for other Electron versions: packaging ships every .native/electron-* folder it finds. */
function pruneOtherBuilds(plan) {
  const root = dirname(plan.outputDir);
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory() && entry.name.startsWith('electron-') && path !== plan.outputDir) {
      log(`removing the build for another Electron version: ${path}`);
      rmSync(path, { recursive: true, force: true });
    }
  }
}

function build(plan) {
  const source = join(repoRoot, 'node_modules', 'better-sqlite3');
  const work = mkdtempSync(join(tmpdir(), 'keel-native-'));
  try {
    log(`copying ${source} to ${work} (the Node build in node_modules stays untouched)`);
    const nodeBuild = join(source, 'build');
    cpSync(source, work, {
      recursive: true,
      filter: (path) => path !== nodeBuild && !path.startsWith(nodeBuild + sep),
    });
    log(`running: ${plan.argv.slice(1).join(' ')}`);
    log(`removed from node-gyp's environment: ${plan.removedEnv.join(', ') || '(nothing)'}`);
    const started = Date.now();
    const result = spawnSync(plan.argv[0], plan.argv.slice(1), {
      cwd: work,
      env: plan.env,
      stdio: 'inherit',
    });
    if (result.status !== 0) {
      const headers = plan.argv.find((arg) => arg.startsWith('--dist-url='))?.slice('--dist-url='.length);
      throw new Error(
        `node-gyp failed (exit ${result.status ?? result.signal}) building better-sqlite3 for Electron ${plan.electronVersion}.\n` +
          `  If the log above shows a download or network error, this machine could not fetch Electron's headers from\n` +
          `  ${headers}: connect to the internet (or set KEEL_ELECTRON_HEADERS_URL to a mirror) and run\n` +
          '  `node scripts/native-electron.mjs` again. A compiler error means build tools are missing\n' +
          '  (python3, make and a C++ compiler; Xcode command line tools on macOS, Visual Studio Build Tools on Windows).\n' +
          '  KEEL_SKIP_NATIVE_ELECTRON=1 skips this step, but the app then cannot open its database.',
      );
    }
    const built = join(work, 'build', 'Release', betterSqliteBinary);
    if (!existsSync(built)) throw new Error(`node-gyp succeeded but ${built} was not produced.`);
    // Stage then rename, so a crash never leaves a half-written binary that later runs would trust.
    mkdirSync(plan.outputDir, { recursive: true });
    const staged = `${plan.output}.partial`;
    cpSync(built, staged);
    renameSync(staged, plan.output);
    writeFileSync(
      plan.stamp,
      `${JSON.stringify({ electron: plan.electronVersion, betterSqlite3: plan.betterSqliteVersion, builtAt: new Date().toISOString() }, null, 2)}\n`,
    );
    log(`built ${plan.output} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    pruneOtherBuilds(plan);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function main(args) {
  const dryRun = args.includes('--dry-run');
  const force = args.includes('--force');
  const unknown = args.filter((arg) => !['--dry-run', '--force'].includes(arg));
  if (unknown.length > 0) throw new Error(`Unknown option ${unknown.join(' ')} (known: --dry-run, --force).`);

  if (process.env.KEEL_SKIP_NATIVE_ELECTRON === '1' && !dryRun) {
    log(
      'skipped (KEEL_SKIP_NATIVE_ELECTRON=1): Electron will not be able to load better-sqlite3 until this runs.',
    );
    return;
  }
  const plan = planBuild(process.env);
  const upToDate = isUpToDate(plan);
  if (dryRun) {
    const { env, ...rest } = plan;
    const relevant = Object.fromEntries(
      Object.entries(env).filter(([key]) => /^(npm_|node_?gyp|nodedir)/i.test(key)),
    );
    console.log(
      JSON.stringify({ ...rest, upToDate, envKeys: Object.keys(env), relevantEnv: relevant }, null, 2),
    );
    return;
  }
  if (upToDate && !force) {
    log(
      `Electron ${plan.electronVersion} build of better-sqlite3 ${plan.betterSqliteVersion} present: ${plan.output}`,
    );
    return;
  }
  log(
    `building better-sqlite3 ${plan.betterSqliteVersion} for Electron ${plan.electronVersion} (about a minute)`,
  );
  await checkHeadersReachable(plan, process.env);
  build(plan);
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  console.error(`[native-electron] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
