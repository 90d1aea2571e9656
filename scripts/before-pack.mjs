// electron-builder beforePack hook: refuse to package an app whose SQLite binding would not load in Electron.
import console from 'node:console';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { betterSqliteBinary, nativeDirFor } from './native-layout.mjs';

/** Throws, naming the command to run, when the Electron build of better-sqlite3 for this Electron version is absent. */
export default function beforePack(context) {
  const { projectDir, config } = context.packager;
  const version = config.electronVersion;
  const binary = join(projectDir, nativeDirFor(version), betterSqliteBinary);
  if (!existsSync(binary)) {
    throw new Error(
      `The Electron ${version} build of better-sqlite3 is missing (${binary}). ` +
        'Run `node scripts/native-electron.mjs` (needs internet for Electron headers), then package again.',
    );
  }
  console.log(`  • keel: shipping ${binary}`);
}
