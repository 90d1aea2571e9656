import os from 'node:os';
import path from 'node:path';

/** Where Keel keeps its data when nothing says otherwise: Electron's `userData` for product "Keel". */
const APP_FOLDER = 'Keel';

/** What decides the home folder; every field defaults to the running process, so tests can pin them. */
export type ResolveHomeOptions = {
  /** `--home DIR` from the command line; wins over everything. */
  home?: string;
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  homedir?: string;
};

/**
 * Returns the absolute Keel home: `--home`, else KEEL_HOME, else the folder Electron's
 * `app.getPath('userData')` gives for the product "Keel" on that platform (computed here, so plain
 * Node — the CLI, the server, tests — and the desktop app agree without importing Electron).
 */
export function resolveHome(options: ResolveHomeOptions = {}): string {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const homedir = options.homedir ?? os.homedir();

  if (options.home) return path.resolve(options.home);
  if (env.KEEL_HOME) return path.resolve(env.KEEL_HOME);

  switch (platform) {
    case 'win32': {
      // Electron's appData on Windows is %APPDATA% (Roaming).
      const appData = env.APPDATA || path.win32.join(homedir, 'AppData', 'Roaming');
      return path.win32.join(appData, APP_FOLDER);
    }
    case 'darwin':
      return path.posix.join(homedir, 'Library', 'Application Support', APP_FOLDER);
    default: {
      // Linux and other Unixes: $XDG_CONFIG_HOME when it is absolute (the XDG spec ignores relative values).
      const xdg = env.XDG_CONFIG_HOME;
      const config = xdg && path.posix.isAbsolute(xdg) ? xdg : path.posix.join(homedir, '.config');
      return path.posix.join(config, APP_FOLDER);
    }
  }
}
