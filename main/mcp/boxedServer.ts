import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { McpStdioServer } from '../common/mcp.js';
import { wrapCommand, type NetworkPolicy, type SandboxInfo } from '../sandbox/box.js';
import { startAllowlistProxy, type AllowlistProxy } from '../sandbox/boxProxy.js';
import { buildChildEnv } from '../sandbox/env.js';
import { createLifeline, launcherArgv } from '../runner/lifeline.js';
import type { SpawnSpec } from './stdioTransport.js';
import { enterHolder } from '../sandbox/overlayView.js';
import { insideView, viewPidOf } from '../sandbox/viewPath.js';

/** Where and how a session's stdio servers run. */
export type McpBoxOptions = {
  sandbox: SandboxInfo;
  /** Real path of the session's root (the project's checkout or folder): the server's working folder. */
  projectRoot: string;
  /** A folder of the session's own; each server gets `<scratchRoot>/<name>` as its writable HOME. */
  scratchRoot: string;
  /** Host paths the server must not see (the Keel home: other sessions live there). */
  hidden?: readonly string[];
  /** The session's network policy: a server reaches only hosts that are on it and on its own `networkAllow`. */
  network: NetworkPolicy;
  /** The environment PATH and the locale come from (default: Keel's own); nothing else of it is passed. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** An HTTP server's stored OAuth grant (main/mcp/oauth.ts), when it has one; never seen by the box. */
  authFor?: (server: string, url: string) => OAuthClientProvider | undefined;
};

/** A server's argv and environment inside the box, and the proxy its network goes through (if any). */
export type BoxedSpawn = { spec: SpawnSpec; proxy: AllowlistProxy | null; network: string[] };

/**
 * Wraps a stdio server's command in the session's box: root read-only, the project read-only unless the
 * server's `writeProject` says otherwise, a private writable HOME, the Keel home and the folder around the
 * project (its siblings) hidden, no network unless
 * hosts are on both the session's allowlist and the server's own. Its environment is the box's (PATH,
 * locale, HOME) plus the server's `env` from its config, and nothing else: Keel's API keys never reach it.
 * Refuses (throws an actionable error) when no OS sandbox works here: a server never runs unconfined.
 */
export async function boxServerCommand(
  name: string,
  server: McpStdioServer,
  given: McpBoxOptions,
): Promise<BoxedSpawn> {
  // Issue #36: a project seen through a copy-on-write view's holder: the server's box runs in its namespaces, the
  // project named as they name it. Refused when the pid is no running holder of this process.
  const viewPid = viewPidOf(given.projectRoot);
  const enter = viewPid === undefined ? [] : enterHolder(viewPid);
  if (enter === undefined) throw new Error('the copy-on-write view this server would run in has ended');
  const options = viewPid === undefined ? given : { ...given, projectRoot: insideView(given.projectRoot) };
  if (options.sandbox.kind === 'none') {
    throw new Error(
      `no OS sandbox works on this machine (${options.sandbox.reason}), and Keel does not run MCP servers unconfined`,
    );
  }
  const scratch = path.join(options.scratchRoot, name);
  fs.mkdirSync(path.join(scratch, 'home'), { recursive: true });
  const sessionAllow = options.network === 'none' ? [] : options.network.allow;
  const allow = (server.networkAllow ?? []).filter((host) => sessionAllow.includes(host));
  let proxy: AllowlistProxy | null = null;
  if (allow.length > 0) {
    proxy = await startAllowlistProxy({
      allow,
      ...(options.network !== 'none' && options.network.hosts ? { hosts: options.network.hosts } : {}),
      listen:
        options.sandbox.kind === 'bwrap' ? { socketPath: path.join(scratch, 'proxy.sock') } : { port: 0 },
    });
  }
  try {
    const command = [
      'cd',
      quote(options.projectRoot),
      '&&',
      'exec',
      quote(server.command),
      ...server.args.map(quote),
    ].join(' ');
    // A server's box dies with Keel like a command's (main/runner/lifeline.ts): the launcher arms and proves
    // the parent-death signal, and the box proves bwrap alive after it was armed against it.
    const lifeline = options.sandbox.kind === 'bwrap' ? createLifeline(scratch) : null;
    // A bare command is looked up on the user's PATH, never on one the server's `env` sets: a config cannot
    // point the lookup (and with it a bound folder) at a folder of its choosing.
    const roots = programRoots(
      server,
      options.projectRoot,
      os.homedir(),
      (options.baseEnv ?? process.env).PATH,
    );
    const wrapped = wrapCommand({
      sandbox: options.sandbox,
      command,
      workspace: scratch,
      cwd: scratch,
      ...(server.writeProject
        ? { writable: [options.projectRoot], readOnly: roots }
        : { readOnly: [options.projectRoot, ...roots] }),
      // Unlike a command's box, the project's neighbours are hidden too (the user's other projects, a home
      // beside it): a server sees the project, not the folder around it. The rest of / stays readable for
      // its runtime, as for commands.
      hidden: [...(options.hidden ?? []), path.dirname(options.projectRoot)],
      home: path.join(scratch, 'home'),
      ...(options.sandbox.kind === 'bwrap' ? {} : { tmpDir: scratch }),
      network: allow.length > 0 ? { allow } : 'none',
      ...(proxy ? { proxy: proxy.endpoint } : {}),
      ...(lifeline === null ? {} : { lifeline }),
    });
    const env = buildChildEnv({
      base: options.baseEnv ?? process.env,
      home: wrapped.env.HOME ?? path.join(scratch, 'home'),
      tmpDir: wrapped.env.TMPDIR ?? scratch,
      extra: { ...server.env, ...wrapped.env },
    });
    return {
      spec: { argv: [...launcherArgv([], lifeline), ...enter, ...wrapped.argv], env },
      proxy,
      network: allow,
    };
  } catch (error) {
    await proxy?.close();
    throw error;
  }
}

/** Script files a server's runtime loads by path: the command itself or the argument naming the one it runs. */
const SCRIPT = /\.(?:[cm]?js|ts|py)$/;
/** Shells: their arguments are a script text, never a program Keel could name from words (see programRoots). */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'fish', 'csh', 'tcsh']);
/** Flags after which a runtime runs inline code, not a script named later (`node -e CODE /x/a.js`). */
const INLINE_CODE = /^(?:-[a-z]*[ecp]|--(?:eval|print|command)(?:=.*)?)$/;

/**
 * The folders holding the server's own program, bound read-only so it can start even where the box hides
 * the folder it lives in (a checkout under /tmp, an `npx` cache under $HOME). The program is the command
 * (an absolute path, or found on `pathEnv` like the box's shell would) and, for a runtime (`node
 * /opt/x/server.js`), the first argument naming a script file, unless inline code (`-e`, `--eval`, `-p`,
 * `-c`) comes before it; no later argument counts. For each: the nearest folder above it that has a
 * node_modules (its package and dependencies), else the file's own folder, else the file alone. A shell
 * (`sh -c "…"`) gets nothing from its arguments: words of a script text are not a program, and binding them
 * made any folder named there readable (issue #38). Never a folder holding the project, the home folder
 * itself or `/`, whose contents the box hides on purpose (bound read-only on the same path, they would show
 * again). Exported for its test.
 */
export function programRoots(
  server: Pick<McpStdioServer, 'command' | 'args'>,
  projectRoot: string,
  home: string = os.homedir(),
  pathEnv: string | undefined = process.env.PATH,
): string[] {
  const roots = new Set<string>();
  const realHome = realOrSame(home);
  const programs = [onPath(server.command, pathEnv), programArgument(server)];
  for (const word of programs) {
    if (word === undefined || !path.isAbsolute(word)) continue;
    let file: string;
    try {
      file = fs.realpathSync(word);
      if (!fs.statSync(file).isFile()) continue;
    } catch {
      continue;
    }
    // A script of the project itself is visible with the project.
    if (file.startsWith(`${projectRoot}${path.sep}`)) continue;
    // An installed package (…/node_modules/pkg/dist/index.js): its whole node_modules, where its
    // dependencies are; a script of a project (…/test/server.mjs): the nearest folder with a node_modules.
    const marker = `${path.sep}node_modules${path.sep}`;
    let root = path.dirname(file);
    if (file.includes(marker)) root = file.slice(0, file.indexOf(marker) + marker.length - 1);
    else
      for (let dir = root; dir !== path.dirname(dir); dir = path.dirname(dir)) {
        if (fs.existsSync(path.join(dir, 'node_modules'))) {
          root = dir;
          break;
        }
      }
    // Never a folder the box hides on purpose: one holding the project (its siblings), the home folder
    // itself, or `/`. Then the script's own folder, else the script file alone.
    const unsafe = (dir: string) =>
      projectRoot === dir ||
      projectRoot.startsWith(`${dir}${path.sep}`) ||
      dir === home ||
      dir === realHome ||
      dir === path.parse(dir).root;
    if (unsafe(root)) root = path.dirname(file);
    if (unsafe(root)) root = file;
    roots.add(root);
  }
  return [...roots];
}

/** True for a shell command (`sh`, `bash`, …): its script text names no program Keel binds. */
export function isShellCommand(command: string): boolean {
  return SHELLS.has(path.basename(command));
}

/**
 * The script a runtime command runs: the first argument that is an absolute path to a script file, when no
 * inline-code flag comes before it. Undefined for a shell, whose arguments are a script text.
 */
function programArgument(server: Pick<McpStdioServer, 'command' | 'args'>): string | undefined {
  if (isShellCommand(server.command)) return undefined;
  for (const arg of server.args) {
    if (INLINE_CODE.test(arg)) return undefined;
    if (path.isAbsolute(arg) && SCRIPT.test(arg)) return arg;
  }
  return undefined;
}

/** An absolute command as it is; a bare name looked up on `pathEnv` (absolute entries only), as a shell would. */
function onPath(command: string, pathEnv: string | undefined): string | undefined {
  if (path.isAbsolute(command)) return command;
  if (command.includes(path.sep) || pathEnv === undefined) return undefined;
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here: the next PATH entry.
    }
  }
  return undefined;
}

function realOrSame(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return folder;
  }
}

function quote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}
