import { realpathSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { NetworkPolicy, WrapOptions, WrappedCommand } from './boxCommon.js';
import { HOME_TOOLCHAINS, proxyEnvironment } from './boxCommon.js';

type Rule = { kind: 'hide' | 'expose' | 'write' | 'pin'; path: string };
const ruleRank: Record<Rule['kind'], number> = { hide: 0, expose: 1, write: 2, pin: 3 };

/** A sandbox-exec profile plus the `-D` parameters it reads; paths travel as parameters, never spliced into text. */
export interface SeatbeltProfile {
  profile: string;
  params: Record<string, string>;
}

/**
 * Generates the macOS Seatbelt profile: network denied (except the loopback port of the allowlist proxy),
 * writes denied except the workspace, writable paths, the private temp folder and terminal devices, the
 * home folder hidden except toolchains. Later rules win in SBPL, so deeper paths come after their parents.
 */
export function buildSeatbeltProfile(options: WrapOptions & { network: NetworkPolicy }): SeatbeltProfile {
  if (options.tmpDir === undefined) throw new Error('sandbox-exec needs a private temp folder (tmpDir).');
  const hostHome = options.hostHome ?? os.homedir();
  const rules: Rule[] = [{ kind: 'hide', path: hostHome }];
  for (const toolchain of HOME_TOOLCHAINS)
    rules.push({ kind: 'expose', path: path.join(hostHome, toolchain) });
  for (const hidden of options.hidden ?? []) rules.push({ kind: 'hide', path: hidden });
  for (const writable of [options.workspace, options.tmpDir, ...(options.writable ?? [])]) {
    rules.push({ kind: 'write', path: writable });
  }
  if (options.home !== undefined) rules.push({ kind: 'write', path: options.home });
  for (const pinned of options.readOnly ?? []) rules.push({ kind: 'pin', path: pinned });
  // Never hide `/` (a service account's home can be `/`): that would hide the whole system.
  const kept = rules.filter((rule) => rule.kind !== 'hide' || depth(rule.path) > 0);
  kept.sort((a, b) => depth(a.path) - depth(b.path) || ruleRank[a.kind] - ruleRank[b.kind]);

  const params: Record<string, string> = {};
  const lines = [
    '(version 1)',
    '(allow default)',
    '(deny network*)',
    '(deny file-write*)',
    '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
  ];
  if (options.network !== 'none') {
    const proxy = options.proxy;
    if (proxy === undefined || !('port' in proxy)) {
      throw new Error('On macOS the allowlist proxy must listen on a loopback port.');
    }
    lines.push(`(allow network-outbound (remote ip "localhost:${Math.trunc(proxy.port)}"))`);
  }
  kept.forEach((rule, index) => {
    const name = `${rule.kind.toUpperCase()}_${index}`;
    params[name] = canonical(rule.path);
    const subpath = `(subpath (param "${name}"))`;
    switch (rule.kind) {
      case 'hide':
        lines.push(`(deny file-read* file-write* ${subpath})`);
        break;
      case 'expose':
        lines.push(`(allow file-read* ${subpath})`);
        break;
      case 'write':
        lines.push(`(allow file-read* file-write* ${subpath})`);
        break;
      case 'pin':
        lines.push(`(deny file-write* ${subpath})`);
        break;
    }
  });
  return { profile: `${lines.join('\n')}\n`, params };
}

/** The sandbox-exec argv and environment for one command (HOME and TMPDIR private, proxy variables set). */
export function buildSeatbeltArgs(
  options: WrapOptions & { cwd: string; network: NetworkPolicy },
): WrappedCommand {
  const { profile, params } = buildSeatbeltProfile(options);
  const tmpDir = options.tmpDir ?? os.tmpdir();
  const env: Record<string, string> = {
    TMPDIR: tmpDir,
    HOME: options.home ?? options.homeVariable ?? path.join(tmpDir, 'home'),
  };
  if (options.network !== 'none' && options.proxy !== undefined && 'port' in options.proxy) {
    Object.assign(env, proxyEnvironment(`http://127.0.0.1:${options.proxy.port}`));
  }
  const defines = Object.entries(params).flatMap(([key, value]) => ['-D', `${key}=${value}`]);
  return {
    argv: [
      options.sandbox.executable ?? '/usr/bin/sandbox-exec',
      '-p',
      profile,
      ...defines,
      'bash',
      '-c',
      options.command,
    ],
    env,
  };
}

function canonical(target: string): string {
  // Seatbelt matches resolved paths (/tmp is /private/tmp on macOS).
  try {
    return realpathSync(target);
  } catch {
    return path.resolve(target);
  }
}

function depth(target: string): number {
  return path.resolve(target).split(path.sep).filter(Boolean).length;
}
