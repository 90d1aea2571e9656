import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt } from '../../../support/cli.js';
import { keel } from '../../../support/keelProcess.js';
import type { ProviderServer, RecordedRequest, ScriptStep } from '../../../support/providerServer.js';
import { closeSessionFixture, newSessionArgs, startSessionFixture } from '../../../support/sessionFixture.js';
import { eventsOf, isChildRequest, ofKind, scriptBoth, toolNamesOf, writeLargeTree } from './support.js';

const TASK = 'Count the TODO-MARK lines under src/ and write the count to notes.txt.';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;
let script: (request: RecordedRequest) => ScriptStep;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  script = () => ({ kind: 'reply', text: 'unscripted' });
  ({ dir, home, project, server } = await startSessionFixture('keel-subagents-cli-', {
    server: { respond: (request) => script(request) },
  }));
  writeLargeTree(project, 'TODO-MARK', { dirs: 2, filesPerDir: 2, linesPerFile: 50 });
});

afterEach(async () => {
  await closeSessionFixture({ dir, server });
});

const run = (policy: string, prompt: string) => newSessionArgs({ project, server }, { policy, prompt });

const spawn = (tools: string[]): ScriptStep => ({
  kind: 'reply',
  toolCalls: [{ id: 'spawn1', name: 'spawn_subagent', arguments: { task: TASK, tools } }],
});

function sessionIds(): { parent: string; child: string } {
  const ids = fs.readdirSync(path.join(home, 'sessions'));
  expect(ids).toHaveLength(2);
  const parent = ids.find((id) => eventsOf(home, id)[0]?.kind === 'session_created' && !isChild(id));
  const child = ids.find((id) => id !== parent);
  return { parent: parent ?? '', child: child ?? '' };
}

function isChild(id: string): boolean {
  const created = eventsOf(home, id)[0];
  return created?.kind === 'session_created' && created.parentId !== undefined;
}

describe('subagents through the keel CLI', () => {
  it('surfaces the child approval as the parent’s, lists the child under its parent, and shows it', async () => {
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawn(['grep', 'write_file']) : { kind: 'reply', text: 'Saved.' }),
      child: (step) =>
        step === 0
          ? { kind: 'reply', toolCalls: [{ id: 'g1', name: 'grep', arguments: { pattern: 'TODO-MARK' } }] }
          : step === 1
            ? {
                kind: 'reply',
                toolCalls: [
                  {
                    id: 'w1',
                    name: 'write_file',
                    arguments: { path: 'notes.txt', content: '200\n' },
                  },
                ],
              }
            : { kind: 'reply', text: 'There are 200; notes.txt says so.' },
    });
    const first = await keel(home, run('ask', 'count the markers'));
    expect(first.code).toBe(3);
    const { parent, child } = sessionIds();
    expect(first.stderr).toMatch(new RegExp(`approval needed \\(request \\d+\\): write_file`));
    expect(first.stderr).toContain(`subagent ${child} asks`);
    expect(first.stderr).toMatch(new RegExp(`keel approve ${parent} --request \\d+`));
    expect(fs.existsSync(path.join(project, 'notes.txt'))).toBe(false);

    const listed = await keel(home, ['sessions']);
    expect(listed.code).toBe(0);
    const rows = listed.stdout.split('\n');
    const parentRow = rows.findIndex((row) => row.startsWith(`${parent} `));
    expect(parentRow).toBeGreaterThan(0);
    expect(rows[parentRow + 1]).toMatch(new RegExp(`^  ${child} .*awaiting_approval`));
    expect(rows[parentRow]).toMatch(/awaiting_approval/);

    const resumeRefused = await keel(home, ['resume', parent]);
    expect(resumeRefused.code).toBe(3);

    const request = ofKind(eventsOf(home, parent), 'approval_request')[0];
    const approved = await keel(home, [
      'approve',
      parent,
      '--request',
      String(request?.seq),
      '--scope',
      'once',
      '--resume',
    ]);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain('Saved.');
    expect(fs.readFileSync(path.join(project, 'notes.txt'), 'utf8')).toBe('200\n');

    const shown = await keel(home, ['show', child]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`child of ${parent}`);
    expect(shown.stdout).toMatch(/approval_granted\s+request \d+, scope once/);
    expect(shown.stdout).toMatch(/tool_result\s+grep g1/);
    const shownParent = await keel(home, ['show', parent]);
    expect(shownParent.stdout).toMatch(new RegExp(`subagent_started\\s+child ${child}`));
    expect(shownParent.stdout).toMatch(new RegExp(`subagent_result\\s+child ${child}: "There are 200`));
    expect(server.requests.filter((r) => r.rejected !== undefined)).toEqual([]);
    // The child was offered exactly the tools it was given.
    expect(toolNamesOf(server.requests.find(isChildRequest)!)).toEqual(['grep', 'write_file']);
  });

  it('after a crash inside the child, resuming the parent resumes the child from its own log', async () => {
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawn(['grep']) : { kind: 'reply', text: 'Parent done.' }),
      child: (step) =>
        step === 0
          ? { kind: 'reply', toolCalls: [{ id: 'g1', name: 'grep', arguments: { pattern: 'TODO-MARK' } }] }
          : { kind: 'reply', text: 'There are 200.' },
    });
    const crashed = await keel(home, run('ask', 'count'), { KEEL_CRASH_AT: 'after_tool_started' });
    expect(crashed.signal).toBe('SIGKILL');
    const { parent, child } = sessionIds();
    expect(eventsOf(home, parent).at(-1)?.kind).toBe('subagent_started');
    expect(eventsOf(home, child).at(-1)?.kind).toBe('tool_call_started');

    const resumed = await keel(home, ['resume', parent]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Parent done.');
    const childEvents = eventsOf(home, child);
    expect(ofKind(childEvents, 'user_message')).toHaveLength(1);
    expect(ofKind(childEvents, 'tool_result')[0]?.content).toContain('TODO-MARK');
    expect(ofKind(eventsOf(home, parent), 'subagent_result')[0]?.content).toContain('There are 200.');
    expect(server.requests.filter((r) => r.rejected !== undefined)).toEqual([]);
  });

  it('a child resumed on its own keeps its restricted tool set', async () => {
    script = scriptBoth({
      parent: (step) => (step === 0 ? spawn(['grep']) : { kind: 'reply', text: 'ok' }),
      child: (step) => (step === 0 ? { kind: 'reply', text: 'first' } : { kind: 'reply', text: 'again' }),
    });
    expect((await keel(home, run('full-auto', 'go'))).code).toBe(0);
    const { child } = sessionIds();
    const before = server.requests.length;
    const again = await keel(home, ['run', '--session', child, 'one more thing']);
    expect(again.code).toBe(0);
    const requests = server.requests.slice(before);
    expect(requests).toHaveLength(1);
    expect(toolNamesOf(requests[0]!)).toEqual(['grep']);
    // On its own it works on checkouts of its parent's Persistent Dirs, with its parent's root: the project.
    const system = JSON.stringify((requests[0]!.body as { messages: { role: string }[] }).messages[0]);
    expect(system).toContain('You work in a checkout of the project');
    expect(eventsOf(home, child)[0]).toMatchObject({ kind: 'session_created', pathRoot: 'project' });
    expect(
      JSON.parse(fs.readFileSync(path.join(home, 'sessions', child, 'persistent.json'), 'utf8')),
    ).toMatchObject({ dirs: [{ name: 'project', commit: 'auto' }] });
  });
});
