// Where the Electron build of better-sqlite3 lives. main/store/native.ts mirrors this layout (a test checks both agree).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The folder, relative to the app root (the repo in dev, app.asar.unpacked when packaged), of one Electron build. */
export function nativeDirFor(electronVersion) {
  return join('.native', `electron-${electronVersion}`);
}

/** The file name better-sqlite3's build produces; kept so `nativeBinding` can point at it. */
export const betterSqliteBinary = 'better_sqlite3.node';

/** Reads the installed Electron version from node_modules; throws a message a person can act on when it is missing. */
export function readElectronVersion(repoRoot) {
  const manifest = join(repoRoot, 'node_modules', 'electron', 'package.json');
  try {
    const { version } = JSON.parse(readFileSync(manifest, 'utf8'));
    if (typeof version !== 'string' || version === '') throw new Error('no version field');
    return version;
  } catch (error) {
    throw new Error(
      `Cannot read the Electron version from ${manifest} (${error.message}). Run \`npm ci\` first.`,
    );
  }
}

/** Reads the installed better-sqlite3 version, recorded next to each Electron build so an upgrade triggers a rebuild. */
export function readBetterSqliteVersion(repoRoot) {
  const manifest = join(repoRoot, 'node_modules', 'better-sqlite3', 'package.json');
  try {
    return JSON.parse(readFileSync(manifest, 'utf8')).version;
  } catch (error) {
    throw new Error(`Cannot read ${manifest} (${error.message}). Run \`npm ci\` first.`);
  }
}
