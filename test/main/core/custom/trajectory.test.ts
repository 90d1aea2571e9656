import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import { approveProjectSetup } from '../../../../main/core/setup/index.js';
import { ensureCliBuilt } from '../../../support/cli.js';
import { keel } from '../../../support/keelProcess.js';
import type { ProviderServer, RecordedRequest, ScriptStep } from '../../../support/providerServer.js';
import {
  closeSessionFixture,
  eventsOf,
  newSessionArgs,
  startSessionFixture,
} from '../../../support/sessionFixture.js';
import { isChildRequest, ofKind, scriptBoth, toolNamesOf, type Body } from '../subagents/support.js';

// One session of the repository: a command (`/review src/`), a skill and a custom agent, all from the
// project's own files once the user approved them, and from the user's home. Real files, the real CLI, the
// scripted provider over HTTP.

let dir: string;
let home: string;
let project: string;
let userHome: string;
let server: ProviderServer;
let script: (request: RecordedRequest) => ScriptStep;

function write(base: string, relative: string, text: string): void {
  const file = path.join(base, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

beforeAll(async () => {
  await ensureCliBuilt();
}, 300_000);

beforeEach(async () => {
  script = () => ({ kind: 'reply', text: 'unscripted' });
  ({ dir, home, project, server } = await startSessionFixture('keel-custom-trajectory-', {
    server: { respond: (request) => script(request) },
  }));
  userHome = path.join(dir, 'user');
  write(project, 'src/app.ts', 'export const answer = 42;\n');
  write(
    project,
    '.claude/commands/review.md',
    '---\ndescription: Review a folder\nargument-hint: [path]\nallowed-tools: Read, Grep, Skill, Task\n---\nReview the code under $1 and report problems.\n',
  );
  write(
    project,
    '.claude/agents/test-runner.md',
    '---\nname: test-runner\ndescription: Runs the tests and reports failures\ntools: Read, Grep\n---\nYou are the test runner. Report each failing test by name.\n',
  );
  write(
    project,
    '.agents/skills/release/SKILL.md',
    '---\nname: release\ndescription: Cut a release of this project\n---\n# Release\n\nBump the version with scripts/bump.sh.\n',
  );
  write(project, '.agents/skills/release/scripts/bump.sh', '#!/bin/sh\necho bumped\n');
  // The user's own skill, from the home (trusted without approval).
  write(
    userHome,
    '.claude/skills/style/SKILL.md',
    '---\nname: style\ndescription: House style for reviews\n---\nBe brief.\n',
  );
});

afterEach(async () => {
  await closeSessionFixture({ dir, server });
});

const run = (prompt: string) => newSessionArgs({ project, server }, { policy: 'ask', prompt });
const env = () => ({ KEEL_USER_HOME: userHome });

function parentSession(): string {
  const ids = fs.readdirSync(path.join(home, 'sessions'));
  const parent = ids.find((id) => {
    const created = eventsOf(home, id)[0];
    return created?.kind === 'session_created' && created.parentId === undefined;
  });
  return parent ?? '';
}

const systemTexts = (request: RecordedRequest) =>
  (request.body as Body).messages.filter((m) => m.role === 'system').map((m) => m.content ?? '');

describe('a command, a skill and a custom agent in one session', () => {
  it('expands /review, loads a skill and runs the custom agent, each recorded and shown', async () => {
    fs.mkdirSync(home, { recursive: true });
    approveProjectSetup(home, project, 'test');
    script = scriptBoth({
      parent: (step) =>
        step === 0
          ? { kind: 'reply', toolCalls: [{ id: 'k1', name: 'load_skill', arguments: { name: 'release' } }] }
          : step === 1
            ? {
                kind: 'reply',
                toolCalls: [
                  { id: 'k2', name: 'load_skill', arguments: { name: 'release', path: 'scripts/bump.sh' } },
                ],
              }
            : step === 2
              ? {
                  kind: 'reply',
                  toolCalls: [
                    {
                      id: 's1',
                      name: 'spawn_subagent',
                      arguments: { task: 'Run the tests of src/', agent: 'test-runner' },
                    },
                  ],
                }
              : { kind: 'reply', text: 'Reviewed: no problems.' },
      child: () => ({ kind: 'reply', text: 'All tests pass.' }),
    });
    const result = await keel(home, run('/review src/'), env());
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Reviewed: no problems.');

    const id = parentSession();
    const events: SessionEvent[] = eventsOf(home, id);
    // The command: the expanded prompt is what the log records, with the command's name and file.
    const user = ofKind(events, 'user_message')[0];
    expect(user?.content).toBe('Review the code under src/ and report problems.\n');
    expect(user?.command).toMatchObject({
      name: 'review',
      arguments: 'src/',
      scope: 'project',
      shown: '.claude/commands/review.md',
      allowedTools: ['read_file', 'grep', 'load_skill', 'spawn_subagent'],
    });
    // The listing: both skills and the agent, once.
    const listed = ofKind(events, 'custom_listed');
    expect(listed).toHaveLength(1);
    expect(listed[0]?.skills.map((s) => `${s.name}:${s.scope}`)).toEqual(['release:project', 'style:user']);
    expect(listed[0]?.agents.map((a) => a.name)).toEqual(['test-runner']);

    const parentRequests = server.requests.filter((r) => !isChildRequest(r));
    // allowed-tools bound the turn's tools.
    for (const request of parentRequests)
      expect(toolNamesOf(request).sort()).toEqual(['grep', 'load_skill', 'read_file', 'spawn_subagent']);
    // The model saw the names and descriptions, never a body, in one block after the system prompt.
    const first = systemTexts(parentRequests[0]!);
    const block = first.find((text) => text.startsWith('# Skills and custom agents')) ?? '';
    expect(block).toContain('- release: Cut a release of this project (.agents/skills/release/SKILL.md)');
    expect(block).toContain('- style: House style for reviews (~/.claude/skills/style/SKILL.md)');
    expect(block).toContain('- test-runner: Runs the tests and reports failures [tools: read_file, grep]');
    expect(block).not.toContain('Bump the version');
    // The skill was loaded (its body and files on use), and its file read by hash.
    const results = ofKind(events, 'tool_result');
    const skill = results.find((r) => r.toolCallId === 'k1');
    expect(skill?.isError ?? false).toBe(false);
    expect(skill?.content).toContain('Bump the version with scripts/bump.sh.');
    expect(skill?.content).toContain('- scripts/bump.sh');
    expect(results.find((r) => r.toolCallId === 'k2')?.content).toContain('echo bumped');
    // The custom agent: its tools, its prompt, inside the parent's session tree.
    const started = ofKind(events, 'subagent_started')[0];
    expect(started?.agent).toMatchObject({ name: 'test-runner', shown: '.claude/agents/test-runner.md' });
    expect(started?.tools).toEqual(['read_file', 'grep']);
    const childRequest = server.requests.find(isChildRequest)!;
    expect(toolNamesOf(childRequest)).toEqual(['read_file', 'grep']);
    expect(systemTexts(childRequest)[0]).toContain(
      'You are the test runner. Report each failing test by name.',
    );
    expect(ofKind(events, 'subagent_result')[0]?.content).toContain('All tests pass.');
    // Every request of the session began with the same bytes: the listing never moved the prefix.
    const prefixes = parentRequests.map((r) => JSON.stringify((r.body as Body).messages.slice(0, 3)));
    expect(new Set(prefixes).size).toBe(1);

    // keel show names the command and the agent.
    const shown = await keel(home, ['show', id], env());
    expect(shown.stdout).toMatch(/user_message\s+\/review "src\/" \(\.claude\/commands\/review\.md\)/);
    expect(shown.stdout).toMatch(/custom_listed\s+skills: release, style; agents: test-runner/);
    expect(shown.stdout).toMatch(/subagent_started\s+child \S+ \(agent test-runner\)/);
  }, 120_000);

  it('refuses an unknown /command before anything is created, and says which commands there are', async () => {
    fs.mkdirSync(home, { recursive: true });
    approveProjectSetup(home, project, 'test');
    const result = await keel(home, run('/revieww src/'), env());
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('there is no command /revieww (commands: /review;');
    expect(
      fs.existsSync(path.join(home, 'sessions')) && fs.readdirSync(path.join(home, 'sessions')).length,
    ).toBeFalsy();
    expect(server.requests).toHaveLength(0);
  }, 60_000);

  it("keeps a command's allowed-tools for the turn's continuation after an approval, and not for the next turn", async () => {
    write(
      userHome,
      '.claude/commands/check.md',
      '---\nallowed-tools: Bash(git status:*)\n---\nCheck the tree.\n',
    );
    script = (request) => {
      const assistants = (request.body as Body).messages.filter((m) => m.role === 'assistant').length;
      const last = (request.body as Body).messages.at(-1);
      if (last?.role === 'user' && last.content === 'plain') return { kind: 'reply', text: 'plain answer' };
      return assistants === 0
        ? { kind: 'reply', toolCalls: [{ id: 'r1', name: 'run_command', arguments: { command: 'true' } }] }
        : { kind: 'reply', text: 'Checked.' };
    };
    const first = await keel(home, run('/check'), env());
    expect(first.code, first.stderr).toBe(3);
    const id = parentSession();
    const request = ofKind(eventsOf(home, id), 'approval_request')[0];
    const resumed = await keel(
      home,
      ['approve', id, '--request', String(request?.seq), '--scope', 'once', '--resume'],
      env(),
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('Checked.');
    const next = await keel(home, ['run', '--session', id, 'plain'], env());
    expect(next.code, next.stderr).toBe(0);
    const offered = server.requests.map((r) => toolNamesOf(r));
    // The command's turn, before and after the approval: run_command alone. The next turn: the session's tools.
    expect(offered.slice(0, 2)).toEqual([['run_command'], ['run_command']]);
    expect(offered[2]).toContain('write_file');
    expect(offered[2]).toContain('spawn_subagent');
  }, 90_000);

  it("refuses a command whose model differs from a continued session's pin", async () => {
    write(userHome, '.claude/commands/fast.md', '---\nmodel: other-model\n---\nBe fast.\n');
    script = () => ({ kind: 'reply', text: 'hello' });
    const first = await keel(home, run('hello'), env());
    expect(first.code, first.stderr).toBe(0);
    const id = parentSession();
    const second = await keel(home, ['run', '--session', id, '/fast'], env());
    expect(second.code).not.toBe(0);
    expect(second.stderr).toContain('/fast asks for model "other-model"');
    expect(second.stderr).toContain('pinned to openai-compatible:scripted-model');
    expect(ofKind(eventsOf(home, id), 'user_message')).toHaveLength(1);
  }, 60_000);
});
