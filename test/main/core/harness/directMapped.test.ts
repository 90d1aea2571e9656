import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventOf } from '../../../../main/common/events.js';
import { watchBackingFolders } from '../../../../main/core/persistent/backingWatch.js';
import { lastFolderTreeWatched } from '../../../../main/core/persistent/directChanges.js';
import { sessionDir } from '../../../../main/core/paths.js';
import { generateHarness } from '../../../../main/core/harness/stream.js';
import { stopSessionBackground } from '../../../../main/runner/background.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { makeRepo, makeTemp } from '../persistent/support.js';
import { callTool, eventsOf, harnessFor, read } from './support.js';

// Issue #36: a --commit direct turn in a host that watches its folder (the app, keel serve, the ACP agent) takes its
// end tree from the watcher, and a command can change a file with no event fs.watch sees: a write through a shared
// memory map. The box's process (its own namespaces, the project bound at its path) writes through mmap(2) (Python's
// mmap: MAP_SHARED, PROT_WRITE) and either exits, releasing the mapping (IN_CLOSE_WRITE: closeWrites.ts), or keeps it
// past the turn's end (a background command: its maps are read when the end tree is made). Either way the turn's
// recorded change holds the write.

let dir: string;
let home: string;
let project: string;
let server: ProviderServer;

/** Writes argv[2] over the start of argv[1] through a shared writable mapping; "hold" keeps the mapping. */
const WRITER = [
  'import mmap, os, sys, time',
  'fd = os.open(sys.argv[1], os.O_RDWR)',
  'm = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)',
  'os.close(fd)',
  'data = sys.argv[2].encode()',
  'm[0:len(data)] = data',
  'print("written", flush=True)',
  'if sys.argv[3] == "hold":',
  '    time.sleep(300)',
  'm.close()',
].join('\n');

const command = (file: string, text: string, mode: 'exit' | 'hold') =>
  `/usr/bin/python3 -c '${WRITER}' ${file} '${text}' ${mode}`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const changedFiles = (id: string) =>
  eventsOf(home, id)
    .filter((e): e is EventOf<'persistent_commit'> => e.kind === 'persistent_commit')
    .flatMap((e) => e.files);

beforeEach(async () => {
  dir = makeTemp('keel-direct-mapped-');
  home = path.join(dir, 'home');
  project = makeRepo(path.join(dir, 'project'), {
    'src/app.ts': 'export const a = 1;\n',
    'src/db.ts': 'export const d = 1;\n',
  });
  server = await new ProviderServer().start();
});

afterEach(async () => {
  watchBackingFolders(false);
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function turn(id: string, steps: Parameters<ProviderServer['enqueue']>) {
  const harness = harnessFor(home, server, {}, { watchProjects: true });
  await harness.sessions.getOrCreate({ id, create: { projectFolder: project, persistentDirs: {} } });
  server.enqueue(...steps);
  const result = await generateHarness({ harness, session: id, messages: [{ role: 'user', content: 'go' }] });
  expect(result.outcome.status).toBe('completed');
}

describe.skipIf(process.platform !== 'linux')(
  "a direct turn's change, with its end tree from the watcher",
  () => {
    it('in a one-turn host too, which watches the folder once the first request is on its way', async () => {
      const harness = harnessFor(home, server, {});
      await harness.sessions.getOrCreate({
        id: 'one',
        create: { projectFolder: project, persistentDirs: {} },
      });
      server.enqueue(
        {
          // The model takes its time (as a real one does): the folder's walk is done before the turn's command.
          kind: 'reply',
          text: 'Writing it through a mapping now.',
          delayMs: 40,
          toolCalls: [
            {
              name: 'run_command',
              arguments: { command: command('src/app.ts', 'export const a = 3;', 'exit') },
            },
          ],
        },
        { kind: 'reply', text: 'done' },
      );
      const result = await generateHarness({
        harness,
        session: 'one',
        messages: [{ role: 'user', content: 'go' }],
      });
      expect(result.outcome.status).toBe('completed');
      expect(lastFolderTreeWatched).toBe(true);
      expect(changedFiles('one')).toEqual([
        expect.objectContaining({ path: 'src/app.ts', postHash: sha256('export const a = 3;\n') }),
      ]);
    });

    it("holds a write the turn's command made through a mapping it released", async () => {
      await turn('released', [
        callTool('run_command', { command: command('src/app.ts', 'export const a = 7;', 'exit') }),
        { kind: 'reply', text: 'done' },
      ]);
      expect(read(path.join(project, 'src/app.ts'))).toBe('export const a = 7;\n');
      expect(lastFolderTreeWatched).toBe(true);
      expect(changedFiles('released')).toEqual([
        expect.objectContaining({
          path: 'src/app.ts',
          preHash: sha256('export const a = 1;\n'),
          postHash: sha256('export const a = 7;\n'),
        }),
      ]);
    });

    it('holds a write through a mapping a background command still holds when the turn ends', async () => {
      try {
        await turn('held', [
          callTool('run_command', {
            command: command('src/db.ts', 'export const d = 5;', 'hold'),
            background: true,
            ready_text: 'written',
          }),
          { kind: 'reply', text: 'done' },
        ]);
        expect(read(path.join(project, 'src/db.ts'))).toBe('export const d = 5;\n');
        expect(lastFolderTreeWatched).toBe(true);
        expect(changedFiles('held')).toEqual([
          expect.objectContaining({ path: 'src/db.ts', postHash: sha256('export const d = 5;\n') }),
        ]);
      } finally {
        await stopSessionBackground(sessionDir(fs.realpathSync(home), 'held'), 'session_stopped');
      }
    });
  },
);
