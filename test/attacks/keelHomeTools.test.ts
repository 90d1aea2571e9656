import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { SessionLog } from '../../main/core/log/sessionLog.js';
import { createTurnHost } from '../../main/core/harness/turnHost.js';
import { grepToOutcome } from '../../main/tools/grep.js';
import { ensureCliBuilt } from '../support/cli.js';
import { keel } from '../support/keelProcess.js';
import { ProviderServer, type ScriptedToolCall } from '../support/providerServer.js';
import { eventsOf, newSessionArgs } from '../support/sessionFixture.js';

// Issue 38, "The Keel home inside a project": a session on a folder that holds the Keel home (`$HOME`, with the
// home at ~/.config/Keel) had the box hide the home from commands, but read_file, grep and glob read other
// sessions' outputs and checkouts, and write_file put an approval line into the home's mcp-approvals.jsonl
// (its server then ran without the user approving). The home must be unreachable by every tool, in every
// mode: named directly, through a link inside the project, or walked into by a listing or a search.

let dir: string;
let user: string;
let home: string;
let server: ProviderServer;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-attack-hometools-')));
  user = path.join(dir, 'user');
  home = path.join(user, '.config', 'Keel');
  fs.mkdirSync(home, { recursive: true });
  fs.writeFileSync(path.join(user, 'README.md'), 'the user folder\n');
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const SECRET = 'ALPHA-PROMPT-MARKER';
// The pattern matches SECRET without containing it, so the call's own arguments (logged in the home) do not.
const PATTERN = 'ALPHA-PROMPT-MARK[E]R';
const APPROVAL = JSON.stringify({
  kind: 'mcp_config_approved',
  project: '/',
  configHash: 'f'.repeat(64),
  at: '2026-01-01T00:00:00.000Z',
});

/** Another session in the same home, on a project whose file holds SECRET: its checkout lies in the home. */
async function otherSession(): Promise<{ id: string; checkoutFile: string }> {
  const other = path.join(dir, 'other');
  fs.mkdirSync(other);
  fs.writeFileSync(path.join(other, 'notes.txt'), `${SECRET}\n`);
  server.enqueue({ kind: 'reply', text: 'ok' });
  const run = await keel(
    home,
    newSessionArgs({ project: other, server }, { policy: 'full-auto', prompt: 'hi' }),
  );
  expect(run.code, run.stderr).toBe(0);
  const [id] = fs.readdirSync(path.join(home, 'sessions'));
  const checkoutFile = path.join('sessions', id as string, 'workspace', 'persistent', 'project', 'notes.txt');
  expect(fs.readFileSync(path.join(home, checkoutFile), 'utf8')).toBe(`${SECRET}\n`);
  return { id: id as string, checkoutFile };
}

/**
 * The tool calls of the attack: reads, listings and searches into the home and writes into it, naming the home
 * as `prefix` (relative to the session's root), through the link `notes`, and by its absolute path.
 */
function attackCalls(prefix: string, checkoutFile: string): ScriptedToolCall[] {
  const inHome = `${prefix}/${checkoutFile}`;
  const calls: [string, Record<string, unknown>][] = [
    ['read_file', { path: inHome }],
    ['read_file', { path: `notes/${checkoutFile}` }],
    ['read_file', { path: path.join(home, checkoutFile) }],
    // Missing here, but the other session's checkout has one: no "did you mean" may name it.
    ['read_file', { path: 'notes.txt' }],
    ['list_dir', { path: '.', depth: 8 }],
    ['list_dir', { path: prefix }],
    ['list_dir', { path: 'notes' }],
    ['glob', { pattern: '**/*' }],
    ['glob', { pattern: 'notes/**' }],
    ['glob', { pattern: `${prefix}/**` }],
    ['grep', { pattern: PATTERN }],
    ['grep', { pattern: PATTERN, path: prefix }],
    ['grep', { pattern: PATTERN, path: 'notes' }],
    ['grep', { pattern: PATTERN, path: inHome }],
    ['write_file', { path: `${prefix}/mcp-approvals.jsonl`, content: `${APPROVAL}\n` }],
    ['write_file', { path: 'notes/settings.json', content: '{}\n' }],
    ['edit_file', { path: inHome, old_string: SECRET, new_string: 'CHANGED' }],
    [
      'apply_patch',
      { input: `*** Begin Patch\n*** Add File: notes/mcp-approvals.jsonl\n+${APPROVAL}\n*** End Patch\n` },
    ],
  ];
  return calls.map(([name, args], index) => ({ id: `a${index}`, name, arguments: args }));
}

// With --commit direct the project is the folder holding the home (the user's $HOME) and the model names the
// home as `.config/Keel`. A checkout session on such a folder is refused at its start ("contains the Keel
// home"), so the checkout case works on a project beside it: its root is a checkout inside the home, five
// folders down (<home>/sessions/<id>/workspace/persistent/project).
describe.each([
  [
    '--commit direct on the folder holding the home',
    ['--commit', 'direct'],
    'user',
    '.config/Keel',
    /Keel's own data folder/,
  ],
  ['a checkout (--commit auto) inside the home', [], 'project', '../../../../..', /escapes the workspace/],
])('attack: the Keel home, %s', (_, extra, projectName, prefix, refusal) => {
  it("no tool reads, lists, searches or writes the home, another session's checkout or its approvals", async () => {
    const other = await otherSession();
    const project = path.join(dir, projectName);
    fs.mkdirSync(project, { recursive: true });
    // A link inside the project into the home: a walk or a path through it must not get there either.
    fs.symlinkSync(home, path.join(project, 'notes'));
    const calls = attackCalls(prefix, other.checkoutFile);
    server.enqueue({ kind: 'reply', toolCalls: calls }, { kind: 'reply', text: 'done' });
    const before = new Set(fs.readdirSync(path.join(home, 'sessions')));
    const run = await keel(
      home,
      newSessionArgs({ project, server }, { policy: 'full-auto', prompt: 'look around', extra }),
    );
    expect(run.code, run.stderr).toBe(0);
    const id = fs.readdirSync(path.join(home, 'sessions')).find((name) => !before.has(name)) as string;
    const results = eventsOf(home, id).filter((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
    expect(results).toHaveLength(calls.length);
    const byCall = new Map(results.map((result) => [result.toolCallId, result]));
    const names = /Keel\/|sessions\/|mcp-approvals|settings\.json/;
    for (const call of calls) {
      const result = byCall.get(call.id as string);
      const args = JSON.stringify(call.arguments);
      const shown = `${call.name} ${args}: ${result?.content}`;
      expect(result, shown).toBeDefined();
      // Nothing of the home reaches the model: not the secret, not its path, not another session, not its
      // names (beyond what the call itself wrote, which a refusal quotes).
      expect(result?.content, shown).not.toContain(SECRET);
      if (!args.includes(home)) expect(result?.content, shown).not.toContain(home);
      if (!args.includes(other.id)) expect(result?.content, shown).not.toContain(other.id);
      if (!names.test(args)) expect(result?.content, shown).not.toMatch(names);
    }
    // Every call whose path names the home (by prefix or through the link) was refused.
    for (const call of calls) {
      const named = (call.arguments as Record<string, unknown>)['path'];
      const target = typeof named === 'string' ? named : '';
      const throughLink = target === 'notes' || target.startsWith('notes/');
      if (target.startsWith(prefix) || throughLink || call.name === 'apply_patch') {
        const result = byCall.get(call.id as string);
        expect(result?.isError, `${call.name} ${target}`).toBe(true);
        expect(result?.content, `${call.name} ${target}`).toMatch(refusal);
      }
    }
    // The writes changed nothing in the home: no approval line, no settings, the other checkout as it was.
    expect(fs.existsSync(path.join(home, 'mcp-approvals.jsonl'))).toBe(false);
    expect(fs.existsSync(path.join(home, 'settings.json'))).toBe(false);
    expect(fs.readFileSync(path.join(home, other.checkoutFile), 'utf8')).toBe(`${SECRET}\n`);
  }, 90_000);
});

describe('attack: the Keel home inside the project, grep engines on the harness context', () => {
  it.each(['ripgrep', 'builtin'] as const)(
    'grep (%s) over a folder holding the home skips it',
    async (engine) => {
      const other = await otherSession();
      fs.symlinkSync(home, path.join(user, 'notes'));
      server.enqueue({ kind: 'reply', text: 'ok' });
      const run = await keel(
        home,
        newSessionArgs(
          { project: user, server },
          { policy: 'full-auto', prompt: 'hi', extra: ['--commit', 'direct'] },
        ),
      );
      expect(run.code, run.stderr).toBe(0);
      const id = fs.readdirSync(path.join(home, 'sessions')).find((name) => name !== other.id) as string;
      const log = SessionLog.open(home, id);
      const host = await createTurnHost(log, { env: { PATH: process.env.PATH }, mcp: false });
      try {
        for (const target of [undefined, '.config', 'notes', `.config/Keel/${other.checkoutFile}`]) {
          const outcome = await grepToOutcome(
            { pattern: PATTERN, ...(target === undefined ? {} : { path: target }) },
            { ...host.tools, idempotencyKey: 'ev1-grep' },
            { engine },
          ).catch((error: Error) => ({ content: error.message, isError: true }));
          expect(outcome.content, String(target)).not.toContain(SECRET);
          expect(outcome.content, String(target)).not.toContain(home);
          if (target === undefined || target === '.config') expect(outcome.content).toBe('No matches.');
          else expect(outcome.isError, String(target)).toBe(true);
        }
      } finally {
        await host.dispose?.();
        log.close();
      }
    },
    90_000,
  );
});
