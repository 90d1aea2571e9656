// The environment of every tool process is built from an allowlist, never inherited: Keel's own API
// keys (ANTHROPIC_API_KEY, OPENAI_API_KEY...) and the user's tokens never reach a tool.

/** Variables copied from the parent environment; everything else is dropped. */
export const CHILD_ENV_ALLOWLIST: readonly string[] = [
  'PATH',
  'LANG',
  'TERM',
  'TZ',
  'USER',
  'SHELL',
  'TMPDIR',
];

/** Fixed values: no pager waits for a key, git never prompts for credentials. */
export const CHILD_ENV_FIXED: Readonly<Record<string, string>> = {
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
};

const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Options of buildChildEnv. */
export interface ChildEnvOptions {
  /** The environment to pick allowlisted variables from (default: process.env). */
  base?: Readonly<Record<string, string | undefined>>;
  /** The tool's private HOME (inside the session's workspace), never the user's real home. */
  home: string;
  /** Overrides TMPDIR, e.g. with the sandbox's private tmp. */
  tmpDir?: string;
  /** Variables the runner sets on purpose (proxy settings...); validated, applied last. */
  extra?: Readonly<Record<string, string>>;
}

function lookup(base: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  if (process.platform !== 'win32') return base[name];
  // Windows names are case-insensitive (Path vs PATH).
  const key = Object.keys(base).find((candidate) => candidate.toUpperCase() === name);
  return key === undefined ? undefined : base[key];
}

/**
 * Builds a tool process's environment from the allowlist (PATH, LANG, LC_*, TERM, TZ, USER, SHELL,
 * TMPDIR), a private HOME, PAGER=cat, GIT_PAGER=cat, GIT_TERMINAL_PROMPT=0, and `extra`; nothing else.
 */
export function buildChildEnv(options: ChildEnvOptions): Record<string, string> {
  const base = options.base ?? process.env;
  const env: Record<string, string> = {};
  for (const name of CHILD_ENV_ALLOWLIST) {
    const value = lookup(base, name);
    if (value !== undefined && !value.includes('\0')) env[name] = value;
  }
  for (const [name, value] of Object.entries(base)) {
    if (/^LC_[A-Z_]+$/.test(name) && value !== undefined && !value.includes('\0')) env[name] = value;
  }
  env.PATH ??= DEFAULT_PATH;
  env.HOME = options.home;
  if (options.tmpDir !== undefined) env.TMPDIR = options.tmpDir;
  Object.assign(env, CHILD_ENV_FIXED);
  for (const [name, value] of Object.entries(options.extra ?? {})) {
    if (!ENV_NAME.test(name)) {
      throw new Error(
        `Invalid extra environment for a tool process: ${JSON.stringify(name)} is not an environment variable name (letters, digits and _).`,
      );
    }
    if (value.includes('\0')) {
      throw new Error(
        `Invalid extra environment for a tool process: the value of ${name} contains a NUL byte.`,
      );
    }
    env[name] = value;
  }
  return env;
}
