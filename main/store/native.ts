import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

// Two builds of better-sqlite3 live side by side: node_modules has the Node build (`npm ci`), and
// scripts/native-electron.mjs puts the Electron build in .native/electron-<version>/. Packaged apps carry the same
// folder inside app.asar.unpacked (electron-builder.yml). scripts/native-layout.mjs mirrors this layout.

/** What resolveNativeBinding looks at; every field defaults to the running process, so tests can inject any. */
export interface NativeBindingContext {
  /** process.versions: `electron` is set only when running inside Electron. */
  readonly versions?: Readonly<Record<string, string | undefined>>;
  /** Electron's process.resourcesPath: the folder that holds app.asar and app.asar.unpacked when packaged. */
  readonly resourcesPath?: string;
  /** The folder holding the app's package.json: the repo in development. Found by walking up when absent. */
  readonly appRoot?: string;
  /** File existence check (injected in tests). */
  readonly exists?: (path: string) => boolean;
}

/** The path of the Electron build relative to the app root; identical in development and in a packaged app. */
export function electronBindingRelativePath(electronVersion: string): string {
  return join('.native', `electron-${electronVersion}`, 'better_sqlite3.node');
}

/**
 * Returns the better-sqlite3 binding to load: under Electron, the path of the Electron-ABI build (packaged first, then
 * the development checkout); under plain Node, undefined so better-sqlite3 loads its own Node build. Throws, naming the
 * command that builds it, when running under Electron and no Electron build exists.
 */
export function resolveNativeBinding(context: NativeBindingContext = {}): string | undefined {
  const versions = context.versions ?? process.versions;
  const electronVersion = versions['electron'];
  if (electronVersion === undefined) return undefined;

  const exists = context.exists ?? existsSync;
  const relative = electronBindingRelativePath(electronVersion);
  const resourcesPath = context.resourcesPath ?? (process as { resourcesPath?: string }).resourcesPath;
  const appRoot = context.appRoot ?? findAppRoot(import.meta.dirname, exists);
  const candidates = [
    resourcesPath === undefined ? undefined : join(resourcesPath, 'app.asar.unpacked', relative),
    appRoot === undefined ? undefined : join(appRoot, relative),
  ].filter((candidate): candidate is string => candidate !== undefined);

  const found = candidates.find((candidate) => exists(candidate));
  if (found !== undefined) return found;
  throw new Error(
    `better-sqlite3 has no build for Electron ${electronVersion} (looked for ${candidates.join(' and ')}). ` +
      'Run `node scripts/native-electron.mjs` (npm start does this) to build it.',
  );
}

/** The nearest folder at or above `start` that holds a package.json: the repo in dev, app.asar when packaged. */
function findAppRoot(start: string, exists: (path: string) => boolean): string | undefined {
  for (let folder = start; ; folder = dirname(folder)) {
    if (exists(join(folder, 'package.json'))) return folder;
    if (dirname(folder) === folder) return undefined;
  }
}
