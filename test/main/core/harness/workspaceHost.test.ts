import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { exportSession, parseExport } from '../../../../main/core/harness/transfer.js';
import { Checkout } from '../../../../main/core/persistent/checkout.js';
import { describeWorkspace } from '../../../../main/core/prompts/workspace.js';
import {
  checkoutLocation,
  writePersistentConfig,
  type PersistentConfig,
} from '../../../../main/core/persistent/config.js';
import { makeSessionFolders } from '../../../../main/core/paths.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { readSessionWorkspace, systemPromptFor } from '../../../../main/core/harness/workspace.js';
import { detectSandbox } from '../../../../main/sandbox/box.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { callTool, eventsOf, filesOf, harnessFor, read, toolResultsSeen } from './support.js';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-workspace-host-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/app.ts': 'export const a = 1;\n' });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const OLD_ID = 'old-session';
const AT = '2025-03-04T09:00:00.000Z';
const systemOf = (index: number) =>
  (server.requests[index]?.body as { messages: { role: string; content: string }[] }).messages[0]?.content;

/**
 * The log of a session an older Keel made in this home, as export lines: no `pathRoot` in session_created,
 * its model's paths relative to the workspace (`persistent/project/src/app.ts`). It stopped right after an
 * edit landed (tool_call_started with the images, no tool_result), with a read still to come.
 */
function oldExport(): string {
  const events = [
    {
      seq: 1,
      kind: 'session_created',
      at: AT,
      sessionId: OLD_ID,
      projectFolder: project,
      provider: 'openai-compatible',
      model: 'scripted-model',
      baseUrl: server.openaiBaseUrl,
      contextWindow: 32_000,
      toolMode: 'write',
      policy: 'ask',
      systemPrompt: 'You are Keel.',
    },
    { seq: 2, kind: 'user_message', at: AT, content: 'make a 2' },
    {
      seq: 3,
      kind: 'assistant_message',
      at: AT,
      content: 'Editing it.',
      toolCalls: [
        {
          id: 'e1',
          name: 'edit_file',
          arguments: JSON.stringify({
            path: 'persistent/project/src/app.ts',
            old_string: 'a = 1',
            new_string: 'a = 2',
          }),
        },
        { id: 'r1', name: 'read_file', arguments: JSON.stringify({ path: 'persistent/project/src/app.ts' }) },
      ],
    },
    {
      seq: 4,
      kind: 'tool_call_started',
      at: AT,
      toolCallId: 'e1',
      tool: 'edit_file',
      idempotencyKey: 'ev3-edit_file',
      preImageHash: sha256('export const a = 1;\n'),
      postImageHash: sha256('export const a = 2;\n'),
    },
  ];
  return events.map((event) => JSON.stringify(event)).join('\n') + '\n';
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Writes the lines (validated as `keel import` validates them) as a session of this home: its own log, not a foreign import. */
function writeOldLog(text: string): string {
  const parsed = parseExport(text);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  return SessionLog.importEvents(home, parsed.events, { id: OLD_ID });
}

describe('a session from before the project was the root', () => {
  it('resumes an old-style log: its persistent/project/ paths keep their meaning, the landed edit is recognised as applied, the prompt and export are as they were', async () => {
    const exported = oldExport();
    const id = writeOldLog(exported);
    // What the harness of that time left beside the log: the folders, persistent.json, the checkout with the
    // edit already in it (the turn stopped after the write, before its result was recorded).
    const dataDir = path.join(fs.realpathSync(home), 'sessions', id);
    const config: PersistentConfig = {
      version: 1,
      dirs: [{ name: 'project', path: project, commit: 'auto' }],
      readOnly: [],
    };
    makeSessionFolders(dataDir);
    writePersistentConfig(dataDir, config);
    const location = checkoutLocation(dataDir, 'project');
    const opened = await Checkout.open(config.dirs[0] as PersistentConfig['dirs'][number], location);
    // Its files where Keel writes them: the checkout, or a copy-on-write view's merged folder through its holder.
    fs.writeFileSync(path.join(await opened.mount(), 'src/app.ts'), 'export const a = 2;\n');
    Checkout.markDirty(location);

    const harness = harnessFor(home, server, { project });
    server.enqueue({ kind: 'reply', text: 'a is 2.' });
    const result = await generateHarness({ harness, session: id, messages: [] });
    expect(result.outcome).toEqual({ status: 'completed', text: 'a is 2.' });

    const results = eventsOf(home, id).filter((e) => e.kind === 'tool_result');
    expect(results.map((e) => e.kind === 'tool_result' && [e.toolCallId, e.content])).toEqual([
      ['e1', 'already applied: persistent/project/src/app.ts already has the expected content'],
      ['r1', '     1\texport const a = 2;'],
    ]);
    expect(toolResultsSeen(server)).toEqual([
      'already applied: persistent/project/src/app.ts already has the expected content',
      '     1\texport const a = 2;',
    ]);
    // Written once, and committed to the folder when the turn ended.
    expect(read(path.join(project, 'src/app.ts'))).toBe('export const a = 2;\n');
    // The request still describes the workspace as that session knew it, and keel payload agrees.
    const created = eventsOf(home, id)[0] as EventOf<'session_created'>;
    expect(created.pathRoot).toBeUndefined();
    expect(systemOf(0)).toBe(`You are Keel.\n\n${describeWorkspace(config)}`);
    expect(systemOf(0)).toContain('Commands run in persistent/project/ unless you pass cwd');
    expect(systemPromptFor(dataDir, created)).toBe(systemOf(0));
    // Its export starts with the very lines it was imported from (no pathRoot added on the way), after the
    // line that carries its persistent.json.
    let text = '';
    exportSession(home, id, (chunk) => (text += chunk));
    const [configLine, ...events] = text.split('\n');
    expect(configLine).toMatch(/^\{"sessionConfig":\{"persistent":/);
    expect(events.join('\n').startsWith(exported)).toBe(true);
  });

  it('without a pinned prompt gets the default worded for its workspace root, never "relative to the project root"', () => {
    const created = JSON.parse(oldExport().split('\n')[0] as string) as EventOf<'session_created'>;
    delete (created as { systemPrompt?: string }).systemPrompt;
    const config: PersistentConfig = {
      version: 1,
      dirs: [{ name: 'project', path: project, commit: 'auto' }],
      readOnly: [],
    };
    const dataDir = path.join(dir, 'data');
    makeSessionFolders(dataDir);
    writePersistentConfig(dataDir, config);
    const old = systemPromptFor(dataDir, created);
    expect(old).toContain('Paths are relative to your workspace root');
    expect(old).not.toContain('Paths are relative to the project root');
    expect(old.endsWith(describeWorkspace(config))).toBe(true);
    // The same log made now (pathRoot: project) gets the project-relative wording.
    const now = systemPromptFor(dataDir, { ...created, pathRoot: 'project' });
    expect(now).toContain('Paths are relative to the project root');
    expect(now).not.toContain('your workspace root');
    // An old session working on its folder directly (no checkouts): its root always was the project.
    const direct = systemPromptFor(path.join(dir, 'no-checkouts'), created);
    expect(direct).toContain('Paths are relative to the project root');
  });

  it("keeps the workspace as its tools' root, with no areas and commands in persistent/project", () => {
    const id = writeOldLog(oldExport());
    const dataDir = path.join(fs.realpathSync(home), 'sessions', id);
    makeSessionFolders(dataDir);
    writePersistentConfig(dataDir, {
      version: 1,
      dirs: [{ name: 'project', path: project, commit: 'auto' }],
      readOnly: [],
    });
    const log = SessionLog.open(home, id, { write: false });
    try {
      const layout = readSessionWorkspace(log, log.read({ limit: 1 })[0] as EventOf<'session_created'>);
      expect(layout).toMatchObject({
        workspace: path.join(dataDir, 'workspace'),
        boxRoot: path.join(dataDir, 'workspace'),
        areas: [],
        commandCwd: 'persistent/project',
      });
    } finally {
      log.close();
    }
  });
});

describe('a session made now', () => {
  it('gets what a real model means: project-relative, ./, absolute, /session/..., /persistent/<name>/...; refuses the rest; hints near matches; runs commands in the project', async () => {
    const sandbox = await detectSandbox();
    fs.writeFileSync(path.join(project, 'src/server.js'), 'listen(8080);\n');
    const notes = makeRepo(path.join(dir, 'notes'), { 'todo.md': '- rate limit\n' });
    const harness = harnessFor(home, server, { project, notes });
    const session = await harness.sessions.getOrCreate({ id: 'real' });
    await session.files.write('/session/uploads/x.csv', 'a,b\n1,2\n');
    // The checkout's absolute path, as `pwd` prints it in a command.
    const checkout = path.join(
      fs.realpathSync(home),
      'sessions',
      'real',
      'workspace',
      'persistent',
      'project',
    );
    const reads = [
      'src/server.js',
      './src/server.js',
      `${checkout}/src/server.js`,
      '/session/uploads/x.csv',
      '/persistent/notes/todo.md',
      '../x',
      '/etc/passwd',
      'src/sever.js',
    ];
    server.enqueue(
      {
        kind: 'reply',
        toolCalls: [
          ...reads.map((sent, i) => ({ id: `r${i}`, name: 'read_file', arguments: { path: sent } })),
          ...(sandbox.kind === 'none'
            ? []
            : [{ id: 'c1', name: 'run_command', arguments: { command: 'pwd' } }]),
        ],
      },
      { kind: 'reply', text: 'ok' },
    );
    await generateHarness({ harness, session, messages: [{ role: 'user', content: 'look' }] });
    const seen = toolResultsSeen(server);
    expect(seen.slice(0, 5)).toEqual([
      '     1\tlisten(8080);',
      '     1\tlisten(8080);',
      '     1\tlisten(8080);',
      '     1\ta,b\n     2\t1,2',
      '     1\t- rate limit',
    ]);
    expect(seen[5]).toMatch(/^\{"error":"Argument \\"path\\" \(\\"\.\.\/x\\"\): path escapes the workspace/);
    expect(seen[6]).toMatch(
      /^\{"error":"Argument \\"path\\" \(\\"\/etc\/passwd\\"\): path escapes the workspace/,
    );
    expect(seen[7]).toBe(
      JSON.stringify({ error: 'path: "src/sever.js" does not exist; did you mean src/server.js?' }),
    );
    if (sandbox.kind !== 'none') expect(seen[8]?.split(/\r?\n/)[0]).toBe(checkout);
  });

  it('records pathRoot: project, and its tools, commands and prompt start at the project checkout', async () => {
    const harness = harnessFor(home, server, { project });
    server.enqueue(callTool('read_file', { path: 'src/app.ts' }), { kind: 'reply', text: 'ok' });
    await generateHarness({ harness, session: 'new', messages: [{ role: 'user', content: 'read it' }] });
    const created = eventsOf(home, 'new')[0] as EventOf<'session_created'>;
    expect(created.pathRoot).toBe('project');
    expect(toolResultsSeen(server)).toEqual(['     1\texport const a = 1;']);
    const dataDir = path.join(fs.realpathSync(home), 'sessions', 'new');
    // A copy-on-write view's workspace is seen through its holder's root (`/proc/<pid>/root`), the box's folders
    // and the tools' roots alike; a copy's is the folder itself. The artifacts are never in the view.
    const checkout = path.join(dataDir, 'workspace', 'persistent', 'project');
    const seen = filesOf(checkout);
    expect(seen === checkout || /^\/proc\/\d+\/root\//.test(seen)).toBe(true);
    const workspace = path.join(seen.slice(0, seen.length - checkout.length), dataDir, 'workspace');
    const log = SessionLog.open(home, 'new', { write: false });
    try {
      expect(readSessionWorkspace(log, created)).toMatchObject({
        workspace: path.join(workspace, 'persistent', 'project'),
        boxRoot: workspace,
        areas: [
          { prefix: '/session', root: path.join(workspace, 'session') },
          { prefix: '/persistent/project', root: path.join(workspace, 'persistent', 'project') },
          // The whole outputs a cut command result names: readable, never written by a tool.
          { prefix: '/artifacts', root: path.join(dataDir, 'artifacts'), sealed: true },
        ],
        commandCwd: '.',
        protectedGlobs: [],
      });
    } finally {
      log.close();
    }
    expect(systemOf(0)).toContain('The project is your root: every relative path is relative to it');
    expect(systemOf(0)).toContain('In commands, /session/ is ../../session/ (from the project root).');
    expect(systemOf(0)).not.toContain('persistent/project');
    expect(systemPromptFor(dataDir, created)).toBe(systemOf(0));
  });
});
