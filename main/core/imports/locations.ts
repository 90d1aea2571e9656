import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ImportTool } from './mapped.js';

/*
 * Where each tool keeps its history, and the session files under a folder. Claude Code: CLAUDE_CONFIG_DIR,
 * else `~/.claude` (the same on Linux, macOS and Windows, under the user's home), sessions in
 * `projects/<folder>/<session>.jsonl` and their subagents in `<session>/subagents/agent-<id>.jsonl` (newer) or
 * `agent-<id>.jsonl` beside them (older). Codex: CODEX_HOME, else `~/.codex`, rollouts in
 * `sessions/YYYY/MM/DD/rollout-*.jsonl`.
 */

/** One session file found, with the files of its subagents (Claude Code). */
export type SourceFile = { tool: ImportTool; file: string; agentFiles: string[] };

export function defaultRoot(
  tool: ImportTool,
  env: NodeJS.ProcessEnv = process.env,
  home: string = os.homedir(),
): string {
  if (tool === 'claude-code') {
    const configured = env['CLAUDE_CONFIG_DIR']?.trim();
    return path.join(configured ? configured : path.join(home, '.claude'), 'projects');
  }
  const configured = env['CODEX_HOME']?.trim();
  return path.join(configured ? configured : path.join(home, '.codex'), 'sessions');
}

/** Every .jsonl file under `dir`, sorted (so an import goes in the same order each time); symlinks are not followed. */
function jsonlFiles(dir: string, depth: number): string[] {
  const found: string[] = [];
  const walk = (folder: string, level: number): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = path.join(folder, entry.name);
      if (entry.isFile() && entry.name.endsWith('.jsonl')) found.push(full);
      else if (entry.isDirectory() && level < depth) walk(full, level + 1);
    }
  };
  walk(dir, 0);
  return found;
}

const AGENT_FILE = /^agent-[^/\\]+\.jsonl$/;

/**
 * The session files under `paths` (files or folders), or under the tool's default location. A Claude Code
 * subagent file is attached to its session (by folder, or by the sessionId of its first line), not listed alone.
 */
export function findSources(tool: ImportTool, paths: readonly string[], root: string): SourceFile[] {
  const given = paths.length > 0 ? paths : [root];
  const files: string[] = [];
  for (const entry of given) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(entry);
    } catch {
      continue;
    }
    if (stat.isFile()) files.push(path.resolve(entry));
    else if (stat.isDirectory()) files.push(...jsonlFiles(path.resolve(entry), tool === 'codex' ? 4 : 3));
  }
  if (tool === 'codex') {
    return [...new Set(files)]
      .filter((file) => paths.length > 0 || path.basename(file).startsWith('rollout-'))
      .map((file) => ({ tool, file, agentFiles: [] }));
  }
  const sessions = new Map<string, SourceFile>();
  const agents: string[] = [];
  for (const file of new Set(files)) {
    if (AGENT_FILE.test(path.basename(file))) agents.push(file);
    else if (path.basename(path.dirname(file)) !== 'subagents')
      sessions.set(file, { tool, file, agentFiles: [] });
    else agents.push(file);
  }
  for (const agent of agents) {
    const owner = agentOwner(agent, sessions);
    if (owner) owner.agentFiles.push(agent);
  }
  return [...sessions.values()];
}

/** The session a subagent file belongs to: `<session>/subagents/…`, else the sessionId on its first line. */
function agentOwner(agent: string, sessions: ReadonlyMap<string, SourceFile>): SourceFile | undefined {
  const folder = path.dirname(agent);
  if (path.basename(folder) === 'subagents') {
    return sessions.get(`${path.dirname(folder)}.jsonl`);
  }
  const sessionId = firstSessionId(agent);
  return sessionId === undefined ? undefined : sessions.get(path.join(folder, `${sessionId}.jsonl`));
}

function firstSessionId(file: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buffer = Buffer.alloc(64 * 1024);
    const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
    const first = buffer.subarray(0, length).toString('utf8').split('\n')[0] ?? '';
    const value = JSON.parse(first) as { sessionId?: unknown };
    return typeof value.sessionId === 'string' ? value.sessionId : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}
