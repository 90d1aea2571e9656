import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalHarnessSession } from '../../../../main/core/harness/harness.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { detectSandbox } from '../../../../main/sandbox/box.js';
import { ProviderServer, type ScriptedToolCall } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { eventsOf, filesOf, harnessFor, read } from './support.js';

const SECRET = 'TOP-SECRET-OF-SESSION-B';

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

beforeEach(async () => {
  dir = makeTemp('keel-isolation-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), { 'src/app.ts': 'export {};\n' });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('isolation between two sessions', () => {
  it('no tool of session A reaches session B: relative escapes, absolute paths, links, commands', async () => {
    const harness = harnessFor(home, server, { project });
    const a = (await harness.sessions.getOrCreate({ id: 'session-a' })) as LocalHarnessSession;
    const b = (await harness.sessions.getOrCreate({ id: 'session-b' })) as LocalHarnessSession;
    await b.files.write('/session/uploads/secret.txt', SECRET);
    // B's checkout holds uncommitted work of its own (a host write, never committed).
    await b.files.write('/persistent/project/b-only.txt', SECRET);
    const bWorkspace = path.join(b.dataDir, 'workspace');
    const bSecret = path.join(bWorkspace, 'session', 'uploads', 'secret.txt');
    expect(read(bSecret)).toBe(SECRET);
    // From A's root (its project checkout, <home>/sessions/session-a/workspace/persistent/project), and
    // from its private area (/session).
    const relative = '../../../../session-b/workspace/session/uploads/secret.txt';
    const calls: ScriptedToolCall[] = [
      { name: 'read_file', arguments: { path: relative } },
      { name: 'read_file', arguments: { path: bSecret } },
      { name: 'read_file', arguments: { path: 'b-only.txt' } },
      {
        name: 'read_file',
        arguments: { path: '/session/../../../session-b/workspace/session/uploads/secret.txt' },
      },
      {
        name: 'read_file',
        arguments: {
          path: '/persistent/project/../../../../session-b/workspace/persistent/project/b-only.txt',
        },
      },
      { name: 'list_dir', arguments: { path: '../../../../session-b/workspace/session/uploads' } },
      { name: 'list_dir', arguments: { path: path.dirname(bSecret) } },
      { name: 'glob', arguments: { pattern: '../../../../session-b/**' } },
      { name: 'glob', arguments: { pattern: `${path.dirname(bSecret)}/*` } },
      { name: 'glob', arguments: { pattern: '/session/../../../session-b/**' } },
      { name: 'grep', arguments: { pattern: SECRET, path: '../../../..' } },
      { name: 'grep', arguments: { pattern: SECRET, path: '/session/../..' } },
      { name: 'grep', arguments: { pattern: SECRET, path: path.join(home, 'sessions') } },
      { name: 'write_file', arguments: { path: relative, content: 'overwritten' } },
      { name: 'write_file', arguments: { path: bSecret, content: 'overwritten' } },
      { name: 'edit_file', arguments: { path: bSecret, old_string: SECRET, new_string: 'edited' } },
      {
        name: 'run_command',
        arguments: { command: `cat ${relative}; cat ${bSecret}; ls ${path.join(home, 'sessions')}` },
      },
      {
        name: 'run_command',
        arguments: {
          command: `ln -s ${bSecret} ../../session/scratch/link && cat ../../session/scratch/link`,
        },
      },
      { name: 'read_file', arguments: { path: '/session/scratch/link' } },
      {
        name: 'run_command',
        arguments: { command: `echo overwritten > ${bSecret}; echo overwritten > ${relative}` },
      },
    ];
    server.enqueue({ kind: 'reply', toolCalls: calls }, { kind: 'reply', text: 'a done' });
    await generateHarness({ harness, session: a, messages: [{ role: 'user', content: 'look around' }] });
    const results = eventsOf(home, 'session-a').filter((e) => e.kind === 'tool_result');
    expect(results).toHaveLength(calls.length);
    for (const result of results)
      expect(result.kind === 'tool_result' && result.content).not.toContain(SECRET);
    for (const artifact of await a.artifacts.list()) {
      expect((await a.artifacts.read(artifact.handle)).toString()).not.toContain(SECRET);
    }
    expect(read(bSecret)).toBe(SECRET);
    expect(read(path.join(filesOf(path.join(bWorkspace, 'persistent', 'project')), 'b-only.txt'))).toBe(
      SECRET,
    );
    expect(
      fs.existsSync(
        path.join(filesOf(path.join(a.dataDir, 'workspace', 'persistent', 'project')), 'b-only.txt'),
      ),
    ).toBe(false);
    expect(fs.existsSync(path.join(project, 'b-only.txt'))).toBe(false);
  });

  it('hides the Keel home from boxed commands even where /tmp masking does not (a home outside /tmp)', async () => {
    const sandbox = await detectSandbox();
    if (sandbox.kind !== 'bwrap') {
      console.warn(`skipped: needs bwrap (${sandbox.reason})`);
      return;
    }
    const outside = fs.mkdtempSync('/var/tmp/keel-home-');
    try {
      const visibleHome = path.join(outside, 'home');
      const harness = harnessFor(visibleHome, server, { project });
      const b = (await harness.sessions.getOrCreate({ id: 'session-b' })) as LocalHarnessSession;
      await b.files.write('/session/uploads/secret.txt', SECRET);
      const bSecret = path.join(b.dataDir, 'workspace', 'session', 'uploads', 'secret.txt');
      server.enqueue(
        {
          kind: 'reply',
          toolCalls: [
            {
              name: 'run_command',
              arguments: {
                command: `ls ${path.join(visibleHome, 'sessions')}; cat ${bSecret}; echo mine > ../../session/scratch/own.txt && cat ../../session/scratch/own.txt`,
              },
            },
          ],
        },
        { kind: 'reply', text: 'ok' },
      );
      await generateHarness({ harness, session: 'session-a', messages: [{ role: 'user', content: 'look' }] });
      const result = eventsOf(visibleHome, 'session-a').find((e) => e.kind === 'tool_result');
      const content = result?.kind === 'tool_result' ? result.content : '';
      expect(content).not.toContain(SECRET);
      // `ls` of the sessions folder lists only this session (its workspace is bound back on top).
      expect(content).not.toMatch(/^session-b$/m);
      expect(content).toMatch(/^session-a$/m);
      expect(content).toContain('mine');
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('links dependency folders read-only: a boxed command can use them and cannot change them', async () => {
    const sandbox = await detectSandbox();
    if (sandbox.kind !== 'bwrap') {
      console.warn(`skipped: needs bwrap (${sandbox.reason})`);
      return;
    }
    // Outside /tmp, which the box replaces by an empty tmpfs: the link target must be visible in the box.
    const visible = fs.mkdtempSync('/var/tmp/keel-deps-');
    try {
      const deps = makeRepo(path.join(visible, 'project'), {
        '.gitignore': 'node_modules/\n',
        'index.js': '\n',
      });
      fs.mkdirSync(path.join(deps, 'node_modules', 'pkg'), { recursive: true });
      fs.writeFileSync(path.join(deps, 'node_modules', 'pkg', 'index.js'), 'module.exports = 42;\n');
      const harness = harnessFor(home, server, { project: deps });
      server.enqueue(
        {
          kind: 'reply',
          toolCalls: [
            {
              name: 'run_command',
              // Commands run in the project's checkout, the root, unless the call names a cwd.
              arguments: { command: 'node -p "require(\'pkg\')"' },
            },
            {
              name: 'run_command',
              arguments: { command: 'echo changed > node_modules/pkg/index.js', cwd: '/persistent/project' },
            },
          ],
        },
        { kind: 'reply', text: 'ok' },
      );
      const result = await generateHarness({
        harness,
        session: 's',
        messages: [{ role: 'user', content: 'use it' }],
      });
      const outputs = result.events
        .filter((e) => e.kind === 'tool_result')
        .map((e) => (e.kind === 'tool_result' ? e : undefined));
      expect(outputs[0]?.content).toMatch(/^42/);
      // A copy links the folder read-only: the write fails. A view shows the project's own dependency folder
      // copy-on-write: the write lands in the view, not the project.
      const dataDir = (await harness.sessions.getOrCreate({ id: 's' })).dataDir as string;
      const { kind } = JSON.parse(
        fs.readFileSync(path.join(dataDir, 'checkouts', 'project', 'state.json'), 'utf8'),
      ) as { kind: string };
      expect(outputs[1]?.isError === true).toBe(kind !== 'view');
      expect(read(path.join(deps, 'node_modules', 'pkg', 'index.js'))).toBe('module.exports = 42;\n');
      // The link is neither committed nor part of the project's state.
      expect(fs.lstatSync(path.join(deps, 'node_modules')).isSymbolicLink()).toBe(false);
    } finally {
      fs.rmSync(visible, { recursive: true, force: true });
    }
  });
});
