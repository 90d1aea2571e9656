import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../main/cli/program.js';
import type { SessionEvent } from '../../../main/common/events.js';
import { importHistory, keelId as historySessionId } from '../../../main/core/harness/historyImport.js';
import { UNANSWERED_AT_IMPORT } from '../../../main/core/imports/mapped.js';
import { importMarkOf, sessionNetworkAllow } from '../../../main/core/log/imported.js';
import { SessionLog, SessionNotFoundError } from '../../../main/core/log/sessionLog.js';
import { ensureCliBuilt } from '../../support/cli.js';
import { keel } from '../../support/keelProcess.js';
import { openSessionIndex } from '../../../main/core/log/indexRebuild.js';
import {
  claudeFolder,
  claudeV02,
  claudeV10,
  claudeV20,
  codexEnveloped,
  codexLegacy,
  codexThreads,
  PNG,
  uuid,
} from '../../support/historyFixtures.js';
import { mountTmpfs, TMPFS_REFUSED, unmountTmpfs } from '../../support/tmpfs.js';

// Issue 35: `keel import --from claude-code|codex`: idempotent, a grown source appends its new part, nothing
// half-imported, records not grants, tool output redacted, a dry run per project.

let dir: string;
let home: string;
let project: string;
let other: string;
let env: NodeJS.ProcessEnv;

beforeAll(ensureCliBuilt, 180_000);

beforeEach(() => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-history-import-')));
  home = path.join(dir, 'home');
  project = path.join(dir, 'proj');
  other = path.join(dir, 'other');
  fs.mkdirSync(project);
  fs.mkdirSync(other);
  env = {
    CLAUDE_CONFIG_DIR: path.join(dir, 'claude'),
    CODEX_HOME: path.join(dir, 'codex'),
    PATH: process.env['PATH'],
  };
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const claudeProjects = () => path.join(dir, 'claude', 'projects');
const codexDay = () => path.join(dir, 'codex', 'sessions', '2025', '09', '01');

function seedClaude(): { v10: string; v20: string } {
  const folder = path.join(claudeProjects(), claudeFolder(project));
  claudeV02(path.join(folder, `${uuid(9001)}.jsonl`), project);
  const v10 = claudeV10(path.join(folder, `${uuid(9002)}.jsonl`), project);
  const { file: v20 } = claudeV20(folder, project);
  claudeV10(path.join(claudeProjects(), claudeFolder(other), `${uuid(9004)}.jsonl`), other, uuid(9004));
  return { v10, v20 };
}

function events(id: string): SessionEvent[] {
  const log = SessionLog.open(home, id);
  try {
    return log.read();
  } finally {
    log.close();
  }
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(['--home', home, ...args], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env,
    readStdin: () => Promise.resolve(''),
  });
  return { code, stdout, stderr };
}

describe('keel import --from claude-code', () => {
  it('imports every session as a record (no grants, policy ask, no network), redacted, with original times; twice imports nothing new', async () => {
    seedClaude();
    const first = await importHistory(home, { tool: 'claude-code', env });
    expect(first.found).toBe(4);
    expect(first.imported.map((s) => s.status)).toEqual(['new', 'new', 'new', 'new']);
    const id = historySessionId('claude-code', uuid(9002));
    const log = events(id);
    const created = log[0] as Extract<SessionEvent, { kind: 'session_created' }>;
    expect(created).toMatchObject({ policy: 'ask', projectFolder: project, at: '2025-06-01T10:01:00.000Z' });
    expect(importMarkOf(created)).toMatchObject({ projectChosen: false });
    expect(sessionNetworkAllow(created)).toEqual([]);
    expect(log.some((e) => e.kind === 'approval_granted' || e.kind === 'tool_rules_applied')).toBe(false);
    // The token in the Read result is redacted on the way in; the times are the source's.
    const read = log.find((e) => e.kind === 'tool_result' && e.toolCallId === 'toolu_v10_read');
    expect(read && 'content' in read ? read.content : '').not.toContain(
      'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    );
    expect(read?.at).toBe('2025-06-01T10:05:00.000Z');
    // The user's image is an attachment of their message (an artifact named by handle, as `keel run --image` keeps
    // one), so a turn continued here sends it again; its bytes are where the handle says.
    const withImage = log.find((e) => e.kind === 'user_message' && e.attachments !== undefined);
    const attachment = withImage?.kind === 'user_message' ? withImage.attachments?.[0] : undefined;
    expect(attachment).toMatchObject({
      mimeType: 'image/png',
      handle: expect.stringMatching(/^attachments\//) as unknown,
    });
    expect(fs.readFileSync(path.join(home, 'sessions', id, 'artifacts', attachment?.handle ?? 'x'))).toEqual(
      PNG,
    );
    expect(log.some((e) => e.kind === 'file_staged')).toBe(false);
    // Subagents are child sessions, listed under their parent.
    const parent = historySessionId('claude-code', uuid(9003));
    const child = `${parent}-agent-a1b2c3d4`;
    expect(events(child)[0]).toMatchObject({ kind: 'session_created', parentId: parent });
    const index = openSessionIndex(home);
    try {
      const listed = index.list({ limit: 100 });
      expect(listed.map((s) => s.id).sort()).toEqual(
        [
          id,
          parent,
          child,
          historySessionId('claude-code', uuid(9001)),
          `${historySessionId('claude-code', uuid(9001))}-side-${uuid(10)}`,
          historySessionId('claude-code', uuid(9004)),
        ].sort(),
      );
      // Searchable by message text.
      expect(index.list({ limit: 100, search: 'expectation' }).map((s) => s.id)).toContain(id);
      // Grouped by project: the list filters by the folder the source recorded.
      expect(index.list({ limit: 100, projectFolder: other }).map((s) => s.id)).toEqual([
        historySessionId('claude-code', uuid(9004)),
      ]);
    } finally {
      index.close();
    }

    // Forkable: a fork is a new session continuing from the imported conversation.
    const fork = await cli(['fork', id]);
    expect(fork.code, fork.stderr).toBe(0);

    const again = await importHistory(home, { tool: 'claude-code', env });
    expect(again.imported).toEqual([]);
    expect(again.skipped.map((s) => s.reason)).toEqual(Array(4).fill('unchanged since it was imported'));
    expect(events(id)).toEqual(log);
  });

  it('a source that grew (continued in Claude Code) appends its new part with its times; touched but unchanged imports nothing', async () => {
    const { v10 } = seedClaude();
    await importHistory(home, { tool: 'claude-code', env });
    const id = historySessionId('claude-code', uuid(9002));
    const before = events(id);
    // Same bytes, new time: hashed, found unchanged.
    fs.utimesSync(v10, new Date(), new Date());
    const touched = await importHistory(home, { tool: 'claude-code', env });
    expect(touched.imported).toEqual([]);
    const base = {
      parentUuid: uuid(13),
      isSidechain: false,
      userType: 'external',
      cwd: project,
      sessionId: uuid(9002),
      version: '1.0.60',
    };
    fs.appendFileSync(
      v10,
      JSON.stringify({
        ...base,
        type: 'user',
        message: { role: 'user', content: 'and the docs?' },
        uuid: uuid(14),
        timestamp: '2025-06-02T08:00:00.000Z',
      }) +
        '\n' +
        JSON.stringify({
          ...base,
          parentUuid: uuid(14),
          type: 'assistant',
          message: {
            id: 'msg_more',
            role: 'assistant',
            model: 'claude-sonnet-4-5-20250929',
            content: [{ type: 'text', text: 'Docs updated.' }],
          },
          uuid: uuid(15),
          timestamp: '2025-06-02T08:01:00.000Z',
        }) +
        '\n',
    );
    const grown = await importHistory(home, { tool: 'claude-code', env });
    expect(grown.imported).toEqual([
      expect.objectContaining({ sessionId: id, status: 'grown', events: 2 }) as unknown,
    ]);
    const after = events(id);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toMatchObject([
      {
        kind: 'user_message',
        content: 'and the docs?',
        at: '2025-06-02T08:00:00.000Z',
        seq: before.length + 1,
      },
      { kind: 'assistant_message', content: 'Docs updated.', at: '2025-06-02T08:01:00.000Z' },
    ]);
    expect((await importHistory(home, { tool: 'claude-code', env })).imported).toEqual([]);
  });

  it('a session continued in Keel is not appended to: skipped, saying why', async () => {
    const { v10 } = seedClaude();
    await importHistory(home, { tool: 'claude-code', env });
    const id = historySessionId('claude-code', uuid(9002));
    const log = SessionLog.open(home, id, { write: true });
    log.append({ kind: 'user_message', content: 'continued here' });
    log.close();
    fs.appendFileSync(
      v10,
      JSON.stringify({
        parentUuid: uuid(13),
        type: 'user',
        message: { role: 'user', content: 'more' },
        uuid: uuid(14),
        timestamp: '2025-06-02T08:00:00.000Z',
        sessionId: uuid(9002),
        cwd: project,
      }) + '\n',
    );
    const report = await importHistory(home, { tool: 'claude-code', env });
    expect(report.imported).toEqual([]);
    expect(report.skipped).toContainEqual({
      file: v10,
      reason: expect.stringContaining('no longer matches its source') as unknown,
    });
  });

  it('--dry-run shows per project what would be imported and writes nothing; --project imports only that project, runnable', async () => {
    seedClaude();
    const dry = await cli(['import', '--from', 'claude-code', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      `would import from Claude Code (${claudeProjects()}): 4 session files found`,
    );
    expect(dry.stdout).toContain(`  ${project}: 3 sessions, 17 messages (3 new, 0 grown, 0 already here)`);
    expect(dry.stdout).toContain(`  ${other}: 1 sessions, 8 messages (1 new, 0 grown, 0 already here)`);
    expect(dry.stdout).toMatch(/1 lines could not be read and were skipped:\n {2}.*9003\.jsonl:6: not JSON/);
    expect(fs.existsSync(path.join(home, 'sessions'))).toBe(false);

    const run = await cli(['import', '--from', 'claude-code', '--project', other]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('imported 1 sessions from Claude Code (1 new, 0 with a new part)');
    expect(run.stdout).toContain(`3 × another project (${project})`);
    expect(run.stderr).toContain('keel: reading 4/4 session files');
    const created = events(historySessionId('claude-code', uuid(9004)))[0] as Extract<
      SessionEvent,
      { kind: 'session_created' }
    >;
    expect(importMarkOf(created)).toMatchObject({ projectChosen: true });
    expect(created.projectFolder).toBe(other);
  });

  it('records imported without a folder become runnable when their project is imported; one continued in Keel stays as it is', async () => {
    seedClaude();
    await importHistory(home, { tool: 'claude-code', env });
    const id = historySessionId('claude-code', uuid(9002));
    const continued = historySessionId('claude-code', uuid(9001));
    const log = SessionLog.open(home, continued, { write: true });
    log.append({ kind: 'user_message', content: 'my own work here' });
    log.close();
    const looked = await importHistory(home, { tool: 'claude-code', env, dryRun: true });
    expect(looked.projects.find((p) => p.project === project)).toMatchObject({ unchanged: 3, records: 3 });
    const chosen = await importHistory(home, { tool: 'claude-code', env, project });
    expect(chosen.imported.map((s) => s.sessionId).sort()).toEqual(
      [id, historySessionId('claude-code', uuid(9003))].sort(),
    );
    const created = events(id)[0] as Extract<SessionEvent, { kind: 'session_created' }>;
    expect(importMarkOf(created)).toMatchObject({ projectChosen: true });
    expect(events(`${historySessionId('claude-code', uuid(9003))}-agent-a1b2c3d4`)[0]).toMatchObject({
      metadata: { imported: { projectChosen: true } },
    });
    // The session continued here is never replaced: the user's event is still there.
    expect(events(continued).at(-1)).toMatchObject({ content: 'my own work here' });
    expect(chosen.skipped).toContainEqual({
      file: expect.stringContaining(uuid(9001)) as unknown,
      reason: expect.stringContaining('no longer matches its source') as unknown,
    });
    const again = await importHistory(home, { tool: 'claude-code', env, project });
    expect(again.imported).toEqual([]);
  });

  it('--since leaves out files not changed since that day', async () => {
    const { v10 } = seedClaude();
    const old = new Date('2025-01-01T00:00:00Z');
    for (const file of fs.readdirSync(path.dirname(v10))) {
      if (file.endsWith('.jsonl')) fs.utimesSync(path.join(path.dirname(v10), file), old, old);
    }
    fs.utimesSync(v10, new Date(), new Date());
    const run = await cli(['import', '--from', 'claude-code', '--since', '2025-06-01', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { imported: { file: string }[]; skipped: { reason: string }[] };
    expect(report.imported.map((s) => s.file)).toContain(v10);
    expect(report.skipped.filter((s) => s.reason === 'not changed since 2025-06-01')).toHaveLength(2);
  });

  it('refuses what it cannot do in one line', async () => {
    expect((await cli(['import', '--from', 'cursor'])).stderr).toContain(
      '--from takes claude-code or codex, not "cursor"',
    );
    expect((await cli(['import', '--from', 'codex', '--since', 'someday'])).stderr).toContain(
      '--since takes a date',
    );
    expect((await cli(['import', 'a.jsonl', '--dry-run'])).stderr).toContain('--dry-run goes with --from');
  });
});

describe('keel import --from codex', () => {
  it('imports both rollout shapes; a dangling call is closed so nothing reruns it; the grown rollout brings its output and the next message', async () => {
    codexLegacy(
      path.join(codexDay(), 'rollout-2025-09-01T08-00-00-11111111-2222-4333-8444-555555555555.jsonl'),
    );
    const file = codexEnveloped(
      path.join(codexDay(), 'rollout-2025-09-01T09-00-00-66666666-7777-4888-8999-000000000000.jsonl'),
      project,
    );
    const report = await importHistory(home, { tool: 'codex', env });
    expect(report.imported.map((s) => s.status)).toEqual(['new', 'new']);
    expect(report.problems).toEqual([
      { file, line: 14, message: expect.stringContaining('not JSON') as unknown },
    ]);
    const id = historySessionId('codex', '66666666-7777-4888-8999-000000000000');
    const log = events(id);
    expect(log[0]).toMatchObject({ provider: 'openai', model: 'gpt-5-codex', reasoningEffort: 'medium' });
    const closer = log.at(-1);
    expect(closer).toMatchObject({
      kind: 'tool_result',
      toolCallId: 'call_env_4',
      content: UNANSWERED_AT_IMPORT,
      isError: true,
    });
    const output = log.find((e) => e.kind === 'tool_result' && e.toolCallId === 'call_env_1');
    expect(output && 'content' in output ? output.content : '').not.toContain(
      'sk-proj-abcdefghijklmnopqrstuvwxyz',
    );

    const line = (minute: number, payload: unknown) =>
      JSON.stringify({ timestamp: `2025-09-01T09:${minute}:00.000Z`, type: 'response_item', payload });
    fs.appendFileSync(
      file,
      `${line(12, { type: 'function_call_output', call_id: 'call_env_4', output: 'lint ok' })}\n${line(13, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Lint passes.' }] })}\n`,
    );
    const grown = await importHistory(home, { tool: 'codex', env });
    expect(grown.imported).toEqual([expect.objectContaining({ sessionId: id, status: 'grown' }) as unknown]);
    const after = events(id);
    // The closed call keeps its one result (a second would be refused); the answer after it is appended.
    expect(after.filter((e) => e.kind === 'tool_result' && e.toolCallId === 'call_env_4')).toHaveLength(1);
    expect(after.at(-1)).toMatchObject({
      kind: 'assistant_message',
      content: 'Lint passes.',
      at: '2025-09-01T09:13:00.000Z',
    });
  });

  it('a subagent is listed under the thread that spawned it, a fork under the thread it forked from; a compaction holds its replacement history', async () => {
    const threads = codexThreads(codexDay(), project);
    const report = await importHistory(home, { tool: 'codex', env });
    expect(report.problems).toEqual([]);
    expect(report.imported.map((s) => s.status)).toEqual(['new', 'new', 'new']);
    const parent = historySessionId('codex', threads.parent);
    const child = historySessionId('codex', threads.child);
    const fork = historySessionId('codex', threads.fork);
    expect(events(child)[0]).toMatchObject({
      kind: 'session_created',
      parentId: parent,
      title: 'Scout (explorer)',
    });
    expect(events(fork)[0]).toMatchObject({ kind: 'session_created', parentId: parent });
    expect(events(parent)[0]).not.toHaveProperty('parentId');
    // The parent's spawn_agent call is answered by the child session (its output, as the model saw it).
    expect(events(parent).filter((e) => e.kind.startsWith('subagent_'))).toMatchObject([
      { kind: 'subagent_started', toolCallId: 'call_spawn_1', childId: child, task: 'map the repository' },
      { kind: 'subagent_result', toolCallId: 'call_spawn_1', childId: child },
    ]);
    const index = openSessionIndex(home);
    try {
      const listed = index.list({ limit: 10 });
      expect(listed.find((row) => row.id === child)?.parentId).toBe(parent);
      expect(listed.find((row) => row.id === fork)?.parentId).toBe(parent);
    } finally {
      index.close();
    }
    // The compaction holds what the conversation went on from: the kept user message and the summary, not
    // Codex's injected context; the encrypted remote item is named, not dropped silently.
    const compaction = events(parent).find((e) => e.kind === 'compaction');
    const summary = compaction && compaction.kind === 'compaction' ? compaction.summary : '';
    expect(summary).toContain('User: map the repository, then fix the flaky test');
    expect(summary).toContain('Assistant: Summary: a subagent maps the repository; the flaky test is next.');
    expect(summary).toContain('1 encrypted compaction summary item');
    expect(summary).not.toContain('environment_context');
  });

  it('a crash while a session is written leaves none of it (never named, not listed); the next import makes it whole', async () => {
    codexLegacy(
      path.join(codexDay(), 'rollout-2025-09-01T08-00-00-11111111-2222-4333-8444-555555555555.jsonl'),
    );
    const id = historySessionId('codex', '11111111-2222-4333-8444-555555555555');
    const killed = await keel(home, ['import', '--from', 'codex'], {
      ...env,
      KEEL_CRASH_AT: 'before_import_seal',
    });
    expect(killed.signal).toBe('SIGKILL');
    // The log was written whole under another name and never named: no session, nothing listed.
    expect(fs.readdirSync(path.join(home, 'sessions', id))).toContain('events.sqlite.building');
    expect(() => SessionLog.open(home, id)).toThrow(SessionNotFoundError);
    const index = openSessionIndex(home);
    try {
      expect(index.list({ limit: 10 })).toEqual([]);
    } finally {
      index.close();
    }
    // The dead create's folder is taken back and the session made whole.
    const again = await importHistory(home, { tool: 'codex', env });
    expect(again.imported).toMatchObject([{ sessionId: id, status: 'new' }]);
    expect(fs.readdirSync(path.join(home, 'sessions', id))).not.toContain('events.sqlite.building');
    expect(events(id).map((e) => e.kind)).toContain('assistant_message');
  });

  it.skipIf(TMPFS_REFUSED !== undefined)(
    'a full disk leaves no half-imported session: the session is whole or absent',
    async () => {
      const small = path.join(dir, 'small');
      fs.mkdirSync(small);
      mountTmpfs(small, '400k');
      try {
        const smallHome = path.join(small, 'home');
        const big = path.join(codexDay(), 'rollout-2025-09-01T10-00-00-big.jsonl');
        const lines = [
          {
            timestamp: '2025-09-01T10:00:00.000Z',
            type: 'session_meta',
            payload: { id: 'big-session', timestamp: '2025-09-01T10:00:00.000Z', cwd: project },
          },
        ];
        for (let i = 0; i < 40; i++) {
          lines.push({
            timestamp: '2025-09-01T10:00:01.000Z',
            type: 'response_item',
            payload: {
              type: 'message',
              role: 'user',
              content: [{ type: 'input_text', text: `${i} ${'x'.repeat(20_000)}` }],
            } as never,
          });
        }
        fs.mkdirSync(codexDay(), { recursive: true });
        fs.writeFileSync(big, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
        const report = await importHistory(smallHome, { tool: 'codex', env });
        expect(report.imported).toEqual([]);
        expect(report.skipped).toEqual([{ file: big, reason: expect.stringMatching(/full/i) as unknown }]);
        expect(report.skipped[0]?.reason).toContain('disk is full');
        const sessions = path.join(smallHome, 'sessions');
        const left = fs.existsSync(sessions) ? fs.readdirSync(sessions) : [];
        for (const id of left) {
          // Whatever a failed create left is not a session: opening it finds none.
          expect(() => SessionLog.open(smallHome, id)).toThrow();
        }
      } finally {
        unmountTmpfs(small);
      }
    },
  );
});
