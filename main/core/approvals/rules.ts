import path from 'node:path';
import picomatch from 'picomatch';
import type { ToolKind } from '../../tools/types.js';
import { commandMatchesPrefix } from './grants.js';

/*
 * Permission rules in the grammar users keep in `.claude/settings.json` (and `.keel/settings.json`):
 * `Tool` or `Tool(specifier)` in `permissions.allow / ask / deny`. Mapped onto Keel's tools:
 *
 *   Bash(npm test:*)  Bash(npm test *)  Bash(npm test)   run_command (and any command tool)
 *   Read(src/**)  Grep  Glob  LS                         the read tools (read_file, grep, glob, list_dir)
 *   Edit(src/**)  Write(…)  MultiEdit  NotebookEdit      the edit tools (write_file, edit_file, apply_patch)
 *   WebFetch(domain:example.com)  WebSearch              web_fetch, web_search
 *   Task  Agent                                          spawn_subagent
 *   mcp__server  mcp__server__*  mcp__server__tool       MCP tools
 *   run_command(npm test:*)  edit_file(src/**) …        Keel's own tool names
 *
 * An allow rule for a command means what a prefix grant means (grants.ts, commandFlags.ts): never a chain, a
 * substitution, `sh -c`, `find -exec`… A deny or ask rule is read the other way, broadly: it matches when its
 * words occur in order in any simple command of the line, inside quotes, `sh -c '…'` and `$(…)` included, so
 * `npm test && git push` is caught by `Bash(git push:*)`. It errs towards refusing.
 */

/** What a rule does when it matches: deny refuses (over every policy), ask forces a request, allow runs. */
export type RuleAction = 'allow' | 'ask' | 'deny';

/** A rule as written, parsed: the tool word and what is in its parentheses, if anything. */
export type ParsedRule = { tool: string; specifier?: string };

/** A call as rules see it. */
export type RuleCall = {
  tool: string;
  kind: ToolKind;
  command?: string;
  /** Workspace-relative path(s) the call touches. */
  path?: string;
  paths?: readonly string[];
  url?: string;
};

/** Where paths in rules are resolved: `/x` and `x` from the project, `//x` absolute, `~/x` from the user's home. */
export type RuleContext = { projectFolder: string; userHome?: string };

/** A rule in effect, with where it came from (shown to the person: a file, or Keel's own rules). */
export type PermissionRule = { action: RuleAction; rule: string; source: string };

const READ_TOOLS: Record<string, string | undefined> = {
  Read: undefined,
  Grep: 'grep',
  Glob: 'glob',
  LS: 'list_dir',
};
const EDIT_TOOLS = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
const NAMED: Record<string, string> = {
  WebFetch: 'web_fetch',
  WebSearch: 'web_search',
  Task: 'spawn_subagent',
  Agent: 'spawn_subagent',
};

/** Parses one rule, or says what is wrong with it (the whole file holding it is then ignored). Pure. */
export function parseRule(text: string): { ok: true; rule: ParsedRule } | { ok: false; message: string } {
  const match = /^([A-Za-z_][A-Za-z0-9_-]*(?:__\*)?)(?:\((.*)\))?$/s.exec(text.trim());
  if (!match) return { ok: false, message: `"${text}" is not a rule (Tool or Tool(specifier))` };
  const tool = match[1] as string;
  const specifier = match[2];
  if (specifier === undefined) return { ok: true, rule: { tool } };
  if (specifier.trim() === '')
    return { ok: false, message: `"${text}" has empty parentheses (write ${tool} alone)` };
  if (tool.startsWith('mcp__'))
    return { ok: false, message: `"${text}": an MCP rule names a server or a tool, without parentheses` };
  if (tool === 'WebFetch' && !/^domain:[A-Za-z0-9.*-]+$/.test(specifier)) {
    return { ok: false, message: `"${text}": WebFetch takes domain:<host>` };
  }
  return { ok: true, rule: { tool, specifier } };
}

/** What kind of call a rule's tool word names, or undefined when it names no Keel tool. */
function ruleTarget(tool: string): { kind?: ToolKind; name?: string; mcp?: string } | undefined {
  if (tool === 'Bash' || tool === 'run_command') return { kind: 'command' };
  if (tool in READ_TOOLS) return { kind: 'read', ...(READ_TOOLS[tool] ? { name: READ_TOOLS[tool] } : {}) };
  if (EDIT_TOOLS.has(tool)) return { kind: 'edit' };
  if (NAMED[tool]) return { name: NAMED[tool] };
  if (tool.startsWith('mcp__')) return { mcp: tool.replace(/__\*$/, '') };
  if (/^[a-z][a-z0-9_]*$/.test(tool)) return { name: tool };
  return undefined;
}

/** True when a rule names no tool Keel has (kept and shown, it matches nothing). */
export function namesNoTool(rule: string): boolean {
  const parsed = parseRule(rule);
  return !parsed.ok || ruleTarget(parsed.rule.tool) === undefined;
}

/**
 * The rule that decides `call`: the first deny that matches, else the first ask, else the first allow
 * (deny wins over everything). Undefined when none matches. Pure.
 */
export function evaluateRules(
  rules: readonly PermissionRule[],
  call: RuleCall,
  context: RuleContext,
): PermissionRule | undefined {
  for (const action of ['deny', 'ask', 'allow'] as const) {
    const found = rules.find(
      (rule) => rule.action === action && ruleMatches(rule.rule, action, call, context),
    );
    if (found) return found;
  }
  return undefined;
}

/** Whether the rule `text`, read as an `action` rule, covers `call`. Pure. */
export function ruleMatches(text: string, action: RuleAction, call: RuleCall, context: RuleContext): boolean {
  const parsed = parseRule(text);
  if (!parsed.ok) return false;
  const { tool, specifier } = parsed.rule;
  const target = ruleTarget(tool);
  if (!target) return false;
  if (target.mcp !== undefined) return call.tool === target.mcp || call.tool.startsWith(`${target.mcp}__`);
  if (target.name !== undefined) {
    if (call.tool !== target.name) return false;
  } else if (target.kind !== call.kind) return false;
  if (specifier === undefined) return true;
  if (target.kind === 'command' || call.kind === 'command') {
    if (call.command === undefined) return false;
    return action === 'allow'
      ? allowsCommand(specifier, call.command)
      : mentionsCommand(specifier, call.command);
  }
  if (specifier.startsWith('domain:'))
    return call.url !== undefined && hostMatches(specifier.slice(7), call.url);
  const glob = ruleGlob(specifier, context);
  if (glob === undefined) return false;
  const matches = picomatch(glob, { dot: true });
  const paths = call.paths ?? (call.path === undefined ? [] : [call.path]);
  if (paths.length === 0) return false;
  return action === 'allow' ? paths.every((p) => matches(p)) : paths.some((p) => matches(p));
}

/** The words a command rule names, and whether it ends open (`npm test:*`, `npm test *`). */
function commandPattern(specifier: string): { words: string; open: boolean; glob: boolean } {
  if (specifier.endsWith(':*')) return { words: specifier.slice(0, -2).trim(), open: true, glob: false };
  const star = specifier.indexOf('*');
  if (star === specifier.length - 1 && specifier.endsWith(' *')) {
    return { words: specifier.slice(0, -2).trim(), open: true, glob: false };
  }
  return { words: specifier.trim(), open: false, glob: star >= 0 };
}

/** An allow rule: the command is the rule's, as a prefix grant of its words covers it (never a chain). */
function allowsCommand(specifier: string, command: string): boolean {
  const pattern = commandPattern(specifier);
  if (!pattern.glob) {
    if (!commandMatchesPrefix(command, pattern.words)) return false;
    return pattern.open || command.trim() === pattern.words;
  }
  // `git * main`: the words before the first * are the prefix a grant would name; the rest must match too.
  const literal = pattern.words.slice(0, pattern.words.indexOf('*')).trim();
  if (literal === '' || !commandMatchesPrefix(command, literal)) return false;
  return wildcardRegex(pattern.words, true).test(command.trim());
}

/** A deny or ask rule: its words occur in order in some simple command of the line (broad, on purpose). */
function mentionsCommand(specifier: string, command: string): boolean {
  const pattern = commandPattern(specifier);
  const segments = simpleCommands(command, 0);
  if (pattern.glob) {
    const regex = wildcardRegex(pattern.words, false);
    return segments.some((words) => regex.test(words.join(' ')));
  }
  const wanted = pattern.words.split(/\s+/).filter((word) => word !== '');
  if (wanted.length === 0) return true;
  return segments.some((words) => {
    for (let start = 0; start < words.length; start++) {
      if (path.posix.basename(words[start] as string) !== wanted[0]) continue;
      let next = 1;
      for (let i = start + 1; i < words.length && next < wanted.length; i++)
        if (words[i] === wanted[next]) next++;
      if (next === wanted.length) return true;
    }
    return false;
  });
}

function wildcardRegex(words: string, anchored: boolean): RegExp {
  const body = words
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+'))
    .join('.*');
  return new RegExp(anchored ? `^${body}$` : `(^|\\s|/)${body}`, 's');
}

const OPERATOR = new Set([';', '&', '|', '\n', '\r', '(', ')', '`', '{', '}']);

/**
 * The simple commands of a line as lists of words, quotes removed: split at every operator outside quotes,
 * and a word with blanks or operators in it (`sh -c 'a; b'`, `"$(b)"`) read again as commands of its own.
 */
function simpleCommands(line: string, depth: number): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < line.length; i++) {
    const char = line[i] as string;
    if (quote) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += char;
      continue;
    }
    if (char === "'" || char === '"') {
      quote = char;
      inWord = true;
    } else if (char === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (char === ' ' || char === '\t') endWord();
    else if (char === '$' && line[i + 1] === '(') {
      endCommand();
      i++;
    } else if (OPERATOR.has(char)) endCommand();
    else {
      word += char;
      inWord = true;
    }
  }
  endCommand();
  if (depth >= 4) return commands;
  const inner: string[][] = [];
  for (const command of commands) {
    for (const each of command) if (/[\s;&|`()]/.test(each)) inner.push(...simpleCommands(each, depth + 1));
  }
  return [...commands, ...inner];
}

/** A path rule as a workspace-relative glob (gitignore-like: a bare name matches at any depth), or undefined. */
function ruleGlob(specifier: string, context: RuleContext): string | undefined {
  let pattern = specifier.trim();
  if (pattern.startsWith('//')) return inside(context.projectFolder, pattern.slice(1));
  if (pattern.startsWith('~/')) {
    return context.userHome === undefined
      ? undefined
      : inside(context.projectFolder, path.join(context.userHome, pattern.slice(2)));
  }
  if (pattern.startsWith('./')) pattern = pattern.slice(2);
  else if (pattern.startsWith('/')) pattern = pattern.slice(1);
  if (pattern === '') return undefined;
  return pattern.includes('/') ? pattern : `**/${pattern}`;
}

/** An absolute pattern as relative to the project, or undefined when it lies outside (no workspace path matches). */
function inside(project: string, absolute: string): string | undefined {
  const relative = path.posix.relative(project, absolute);
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return undefined;
  return relative;
}

function hostMatches(domain: string, url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return false;
  }
  const wanted = domain.toLowerCase();
  if (wanted.startsWith('*.')) return host.endsWith(wanted.slice(1));
  return host === wanted;
}

/**
 * The rule an approval's "always" keeps for a grant: `prefix:npm test` → `Bash(npm test:*)`, `path:src/**` →
 * `Edit(src/**)`, `session` → the tool's whole kind (`Bash`, `Edit`) or the tool's own name, `tool` (MCP) →
 * the tool. Undefined for `once` (it answers one call, nothing to keep). Pure.
 */
export function ruleForGrant(tool: string, kind: ToolKind | undefined, scope: string): string | undefined {
  if (scope === 'once') return undefined;
  if (scope.startsWith('prefix:')) return `Bash(${scope.slice('prefix:'.length).trim()}:*)`;
  if (scope.startsWith('domain:')) return `WebFetch(${scope})`;
  if (scope.startsWith('path:'))
    return `${kind === 'read' ? 'Read' : 'Edit'}(${scope.slice('path:'.length)})`;
  if (tool.startsWith('mcp__')) return tool;
  if (kind === 'command') return 'Bash';
  if (kind === 'edit') return 'Edit';
  return tool;
}

/**
 * The deny rule a "reject always" keeps for a refused call (issue 33, the editor's reject_always): the command
 * itself for a command tool (`Bash(git push origin main)`: a deny rule matches its words in any simple command
 * of a line), the path for a file tool (`Edit(src/a.ts)`, `Read(…)`), the tool's own name otherwise (an MCP tool,
 * web_fetch…). Arguments are the model's: a call whose arguments do not say these gives the tool's name. Pure.
 */
export function ruleForDenial(tool: string, kind: ToolKind | undefined, argumentsJson: string): string {
  let args: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(argumentsJson) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
      args = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: the tool as a whole.
  }
  const text = (value: unknown) =>
    typeof value === 'string' && value.trim() !== '' && !/[\n\r]/.test(value) ? value.trim() : undefined;
  const command = text(args.command);
  if (kind === 'command' && command) return `Bash(${command})`;
  const file = text(args.path);
  if (file && (kind === 'edit' || kind === 'read')) return `${kind === 'read' ? 'Read' : 'Edit'}(${file})`;
  if (kind === 'command') return 'Bash';
  return tool;
}
