import { isCollection, isScalar, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import type { SetupKind, SetupProblem } from '../../common/setup.js';
import { parseRule } from '../approvals/rules.js';
import { jsonErrorOffset } from './jsonPosition.js';

/*
 * Each format's own shape, checked whole: a file either parses into its value or yields one problem naming
 * the line at fault, and then nothing of it is used (never half-applied). Only the keys Keel acts on are
 * checked; the others tools keep in the same files (`env`, `model`, `statusLine`, …) pass through untouched.
 */

// Each rule must parse (approvals/rules.ts): one bad rule leaves the whole file out, never half of it.
const ruleList = z.array(
  z.string().superRefine((rule, ctx) => {
    const parsed = parseRule(rule);
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.message });
  }),
);

/** One hook handler (Claude Code's and Codex's shape); types other than `command` are read but not run. */
const HookHandler = z.looseObject({
  type: z.string().min(1),
  command: z.string().optional(),
  /** Seconds. */
  timeout: z.number().positive().optional(),
});

/** `{ "<Event>": [{ "matcher": "Bash", "hooks": [{ "type": "command", "command": "…" }] }] }`. */
export const HooksBlock = z.record(
  z.string().min(1),
  z.array(
    z.looseObject({
      matcher: z.string().optional(),
      hooks: z.array(
        HookHandler.refine(
          (hook) => hook.type !== 'command' || !!hook.command,
          'a command hook needs "command"',
        ),
      ),
    }),
  ),
);
export type HooksBlock = z.infer<typeof HooksBlock>;

/** A settings file (`.claude/settings.json`, `.claude/settings.local.json`, `.keel/settings.json`). */
export const SettingsFile = z.looseObject({
  permissions: z
    .looseObject({
      allow: ruleList.optional(),
      ask: ruleList.optional(),
      deny: ruleList.optional(),
      defaultMode: z.string().optional(),
      additionalDirectories: z.array(z.string()).optional(),
    })
    .optional(),
  hooks: HooksBlock.optional(),
});
export type SettingsFile = z.infer<typeof SettingsFile>;

/** Codex's `hooks.json`: only `hooks`. */
export const HooksFile = z.looseObject({ hooks: HooksBlock });

const toolList = z.union([z.string(), z.array(z.string())]);

/** Front matter of a custom command (Claude Code's `.claude/commands/*.md`). */
export const CommandFrontMatter = z.looseObject({
  description: z.string().optional(),
  'argument-hint': z.union([z.string(), z.array(z.string())]).optional(),
  model: z.string().optional(),
  'allowed-tools': toolList.optional(),
  'disable-model-invocation': z.boolean().optional(),
});

/** Front matter of a custom agent (Claude Code's subagent file): its body is the agent's system prompt. */
export const AgentFrontMatter = z.looseObject({
  name: z.string().min(1).optional(),
  description: z.string().min(1, 'an agent needs a description'),
  tools: toolList.optional(),
  model: z.string().optional(),
});

/** Front matter of a SKILL.md (the Agent Skills format): `description` says when to use it. */
export const SkillFrontMatter = z.looseObject({
  name: z
    .string()
    .max(64)
    .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'a skill name is lowercase letters, digits and single hyphens')
    .optional(),
  description: z.string().min(1, 'a skill needs a description').max(1024),
  'allowed-tools': toolList.optional(),
});

/** A parsed file: JSON for settings and hooks, front matter and body for markdown. */
export type Parsed =
  | {
      ok: true;
      json?: Record<string, unknown>;
      frontMatter?: Record<string, unknown>;
      body?: string;
      bodyLine?: number;
    }
  | { ok: false; problem: SetupProblem };

/** Parses `text` as the format of `kind`; `path` names the file in a problem. Pure. */
export function parseSetupText(kind: SetupKind, path: string, text: string): Parsed {
  if (kind === 'settings') return parseJson(path, text, SettingsFile);
  if (kind === 'hooks') return parseJson(path, text, HooksFile);
  if (kind === 'command') return parseMarkdown(path, text, CommandFrontMatter, false);
  if (kind === 'agent') return parseMarkdown(path, text, AgentFrontMatter, true);
  if (kind === 'skill') return parseMarkdown(path, text, SkillFrontMatter, true);
  return { ok: true };
}

function parseJson(path: string, text: string, schema: z.ZodType): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    const offset = jsonErrorOffset(text);
    const line = lineAt(text, offset < 0 ? text.length : offset);
    const met = offset < 0 || offset >= text.length ? 'the end of the file' : JSON.stringify(text[offset]);
    return { ok: false, problem: { path, line, message: `not valid JSON: unexpected ${met}` } };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: { path, line: 1, message: 'not a JSON object' } };
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) return { ok: false, problem: issueProblem(path, text, parsed.error, 0) };
  return { ok: true, json: parsed.data as Record<string, unknown> };
}

function parseMarkdown(path: string, text: string, schema: z.ZodType, required: boolean): Parsed {
  const lines = text.split('\n');
  const opens = lines[0]?.replace(/\r$/, '') === '---';
  const close = opens ? lines.findIndex((line, index) => index > 0 && line.replace(/\r$/, '') === '---') : -1;
  if (opens && close < 0)
    return { ok: false, problem: { path, line: 1, message: 'front matter opened by --- is never closed' } };
  const yamlText = opens ? lines.slice(1, close).join('\n') : '';
  const body = opens ? lines.slice(close + 1).join('\n') : text;
  const bodyLine = opens ? close + 2 : 1;
  if (!opens && !required) return { ok: true, frontMatter: {}, body, bodyLine };
  if (!opens) {
    const empty = schema.safeParse({});
    if (!empty.success)
      return {
        ok: false,
        problem: { path, line: 1, message: `no front matter: ${firstIssue(empty.error)}` },
      };
  }
  const counter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: false });
  const yamlError = doc.errors[0];
  if (yamlError) {
    const line = counter.linePos(yamlError.pos[0]).line + 1;
    return {
      ok: false,
      problem: {
        path,
        line,
        message: `front matter is not valid YAML: ${yamlError.message.split('\n')[0] ?? ''}`,
      },
    };
  }
  const raw: unknown = doc.toJS() ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, problem: { path, line: 2, message: 'front matter is not a mapping of keys' } };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success)
    return { ok: false, problem: issueProblem(path, yamlText, parsed.error, 1, doc, counter) };
  return { ok: true, frontMatter: parsed.data as Record<string, unknown>, body, bodyLine };
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  return `${where}${issue?.message ?? 'invalid'}`;
}

/** The problem of a schema issue, on the line of the value at fault (or of its nearest parent that exists). */
function issueProblem(
  path: string,
  text: string,
  error: z.ZodError,
  lineOffset: number,
  doc?: Document,
  counter?: LineCounter,
): SetupProblem {
  const issue = error.issues[0];
  const keys = (issue?.path ?? []).map((key) => (typeof key === 'number' ? key : String(key)));
  let line = 1;
  // JSON is YAML's flow style: the same parser finds where a value sits, in either format.
  const located = counter && doc ? { doc, counter } : locate(text);
  for (let depth = keys.length; depth >= 0; depth--) {
    const node = located.doc.getIn(keys.slice(0, depth), true);
    const range = isScalar(node) || isCollection(node) ? node.range : undefined;
    if (range) {
      line = located.counter.linePos(range[0]).line;
      break;
    }
  }
  return { path, line: line + lineOffset, message: firstIssue(error) };
}

function locate(text: string): { doc: Document; counter: LineCounter } {
  const counter = new LineCounter();
  return { doc: parseDocument(text, { lineCounter: counter }), counter };
}

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < Math.min(offset, text.length); i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
