import path from 'node:path';
import { z } from 'zod';

/** Which OS sandbox wraps commands on this machine; `none` means commands would run unconfined. */
export type SandboxKind = 'bwrap' | 'sandbox-exec' | 'none';

/** What `detectSandbox` found: the kind that actually started a trial command, and why. */
export interface SandboxInfo {
  kind: SandboxKind;
  /** A sentence a person can act on: why this kind was chosen, or why no sandbox could start. */
  reason: string;
  /** The sandbox tool's version string, when known. */
  version: string | null;
  /** Absolute path of the sandbox executable (bwrap or sandbox-exec), null for `none`. */
  executable: string | null;
  /** Absolute path of socat, needed on Linux to bridge the allowlist proxy into the box. */
  socat: string | null;
}

/** Network policy of the box: no route out at all, or only hosts on the allowlist via Keel's proxy. */
export const NetworkPolicy = z.union([
  z.literal('none'),
  z.object({
    /** Host names (`registry.npmjs.org`), wildcard subdomains (`*.github.com`), optionally `:port`. */
    allow: z.array(z.string().min(1)),
    /** hosts-file style name → IP pinning used by the proxy instead of DNS (tests, pinned mirrors). */
    hosts: z.record(z.string(), z.string()).optional(),
  }),
]);
export type NetworkPolicy = z.infer<typeof NetworkPolicy>;

/** Where the allowlist proxy listens: a Unix socket (bound into the bwrap box) or a loopback port (macOS). */
export type ProxyEndpoint = { socketPath: string } | { port: number };

/** Everything the box needs to wrap one command. Paths are absolute host paths. */
export interface WrapOptions {
  sandbox: SandboxInfo;
  /** Shell text, run as `bash -c <command>` inside the box. */
  command: string;
  /** The workspace root: readable and writable inside the box. */
  workspace: string;
  /** Working directory; must be inside the workspace or a writable path. Defaults to the workspace. */
  cwd?: string;
  /** Further writable directories (e.g. the session's private workspace). */
  writable?: string[];
  /** Paths inside writable directories kept read-only (e.g. `.git/hooks`); only existing paths can be pinned. */
  readOnly?: string[];
  /** Further host paths made invisible inside the box (e.g. Keel's own data folder). */
  hidden?: string[];
  /** HOME inside the box: a writable directory in the workspace-private area. Defaults to a private `/tmp/home`. */
  home?: string;
  /** The user's real home, hidden except for toolchain folders. Defaults to `os.homedir()`. */
  hostHome?: string;
  /**
   * Issue #30: HOME's value inside the box when `home` is not set, with no mount of its own: a user's hook runs
   * with HOME = the user's home path (hidden as ever; only the scripts pinned read-only are there), so `~/…`
   * in its command names the script it names outside. Defaults to the private home.
   */
  homeVariable?: string;
  /** Private temp directory for sandboxes without a private /tmp (macOS, none). */
  tmpDir?: string;
  network: NetworkPolicy;
  /** Required when `network` is an allowlist: where Keel's allowlist proxy listens. */
  proxy?: ProxyEndpoint;
  /**
   * Host path of a FIFO the launcher opened as fd `LIFELINE_FD` (`main/runner/lifeline.ts`). bwrap only: bwrap
   * keeps it as its status fd, the box runs as its own PID 1 and, before anything else, proves bwrap (its
   * parent, armed against) still alive by opening the FIFO for writing.
   */
  lifeline?: string;
  /**
   * bwrap only (issue #32, background commands): the box does not get a network namespace of its own, because
   * the launcher entered a running background command's (`NetworkJoin`, main/runner/lifeline.ts); the allowlist
   * proxy is then bridged on `proxyPort` so it does not collide with the bridge that box already runs.
   */
  sharedNetwork?: { proxyPort: number };
}

/**
 * A network namespace a new box joins instead of making its own: the one of a session's running background
 * command, so the session's later commands reach the servers it started on localhost (issue #32). `pid` is a
 * process inside it; `net` (and `user`, when the box runs in a user namespace of its own) are the namespace
 * links (`net:[4026532890]`) read when the command started, checked again by the launcher on the open file so
 * a reused pid can never put a box in another namespace (the host's).
 */
export interface NetworkJoin {
  pid: number;
  net: string;
  user?: string;
}

/** A wrapped command: the argv to spawn and environment entries the box requires. */
export interface WrappedCommand {
  /** argv[0] is the executable; spawn it directly (never through a shell). */
  argv: string[];
  /** Variables to merge over the child environment (HOME, TMPDIR, proxy settings). */
  env: Record<string, string>;
}

/** The TCP port the allowlist proxy is exposed on inside the bwrap box (its network namespace is private). */
/**
 * Toolchains commonly installed under the home folder, re-exposed read-only while the rest of home is hidden
 * (bubblewrap and sandbox-exec alike).
 */
export const HOME_TOOLCHAINS = [
  '.nvm',
  '.pyenv',
  '.rustup',
  '.cargo/bin',
  '.local/bin',
  '.local/lib',
  '.volta',
  '.bun/bin',
  '.deno/bin',
  'go/bin',
  '.sdkman/candidates',
  '.asdf',
];

export const BOX_PROXY_PORT = 3128;

/** Proxy settings for common tools (curl, npm, pip, git) pointing at `url`; loopback bypasses it. */
export function proxyEnvironment(url: string): Record<string, string> {
  return {
    HTTP_PROXY: url,
    HTTPS_PROXY: url,
    http_proxy: url,
    https_proxy: url,
    ALL_PROXY: url,
    all_proxy: url,
    npm_config_proxy: url,
    npm_config_https_proxy: url,
    NO_PROXY: 'localhost,127.0.0.1,::1',
    no_proxy: 'localhost,127.0.0.1,::1',
  };
}

/** True when `child` is `parent` or lies below it (plain path comparison, no symlink resolution). */
export function isInside(parent: string, child: string): boolean {
  const relative = path.relative(path.resolve(parent), path.resolve(child));
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
