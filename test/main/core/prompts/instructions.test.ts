import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  INSTRUCTIONS_CAP_BYTES,
  readProjectInstructions,
  sameInstructionFiles,
} from '../../../../main/core/prompts/instructions.js';
import { walkCounts } from '../../../../main/core/prompts/instructionFolders.js';
import { makeTempDir, removeTempDir } from '../../../support/cli.js';

let dir: string;
let project: string;

beforeEach(() => {
  dir = fs.realpathSync(makeTempDir('keel-instructions-'));
  project = path.join(dir, 'project');
  fs.mkdirSync(project);
});

afterEach(() => removeTempDir(dir));

function write(relative: string, content: string): void {
  const file = path.join(project, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

const read = (extra: { capBytes?: number; redact?: (text: string) => string } = {}) =>
  readProjectInstructions({
    workspace: project,
    projectRoot: '.',
    redact: extra.redact ?? ((text) => text),
    ...(extra.capBytes === undefined ? {} : { capBytes: extra.capBytes }),
  });

describe('readProjectInstructions', () => {
  it('finds AGENTS.md at the root and in nested folders, CLAUDE.md only where a folder has no AGENTS.md', async () => {
    write('AGENTS.md', 'root rules\n');
    write('CLAUDE.md', 'ignored: the root has an AGENTS.md\n');
    write('pkg/web/CLAUDE.md', 'web rules\n');
    write('pkg/api/AGENTS.md', 'api rules\n');
    write('pkg/api/src/deep/AGENTS.md', 'deep rules\n');
    write('docs/README.md', 'not instructions\n');
    const files = await read();
    expect(files.map((file) => [file.path, file.content])).toEqual([
      ['AGENTS.md', 'root rules\n'],
      ['pkg/api/AGENTS.md', 'api rules\n'],
      ['pkg/web/CLAUDE.md', 'web rules\n'],
      ['pkg/api/src/deep/AGENTS.md', 'deep rules\n'],
    ]);
    expect(files[0]).toEqual({
      path: 'AGENTS.md',
      sha256: createHash('sha256').update('root rules\n').digest('hex'),
      size: 11,
      content: 'root rules\n',
    });
  });

  it('skips dependency, build and dot folders, and an instruction file linked from outside the project', async () => {
    write('node_modules/lib/AGENTS.md', 'a dependency’s rules');
    write('.github/AGENTS.md', 'hidden');
    write('dist/AGENTS.md', 'built');
    fs.writeFileSync(path.join(dir, 'secret.txt'), 'TOP SECRET');
    fs.mkdirSync(path.join(project, 'linked'));
    fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(project, 'linked', 'AGENTS.md'));
    write('src/AGENTS.md', 'src rules');
    expect((await read()).map((file) => file.path)).toEqual(['src/AGENTS.md']);
  });

  it('redacts the text the model gets and hashes the bytes on disk', async () => {
    write('AGENTS.md', 'deploy with TOKEN=abc123\n');
    const [file] = await read({ redact: (text) => text.replace('abc123', '[redacted]') });
    expect(file?.content).toBe('deploy with TOKEN=[redacted]\n');
    expect(file?.sha256).toBe(createHash('sha256').update('deploy with TOKEN=abc123\n').digest('hex'));
  });

  it('caps the total text: the file that crosses the cap is cut, the ones after it are listed empty', async () => {
    write('AGENTS.md', 'é'.repeat(30_000)); // 60,000 bytes
    write('a/AGENTS.md', 'a rules');
    const files = await read();
    expect(INSTRUCTIONS_CAP_BYTES).toBe(32 * 1024);
    expect(files.map((file) => [file.path, file.size, file.truncated])).toEqual([
      ['AGENTS.md', 60_000, true],
      ['a/AGENTS.md', 7, true],
    ]);
    // Never cut inside a character: 16,384 two-byte characters fill the cap exactly.
    expect(files[0]?.content).toBe('é'.repeat(16_384));
    expect(files[1]?.content).toBe('');

    const small = await read({ capBytes: 10 });
    expect(small.map((file) => file.content)).toEqual(['ééééé', '']);
  });

  it('answers an empty list for a project without instruction files, and compares lists by path and bytes', async () => {
    expect(await read()).toEqual([]);
    write('AGENTS.md', 'v1');
    const first = await read();
    expect(sameInstructionFiles(first, await read())).toBe(true);
    write('AGENTS.md', 'v2');
    expect(sameInstructionFiles(first, await read())).toBe(false);
    expect(sameInstructionFiles(first, [])).toBe(false);
  });
});

describe('the instruction walk between turns', () => {
  /** Every folder of the project timed a minute back: old enough to be kept (a fresh mtime may still move). */
  function age(): void {
    const past = new Date(Date.now() - 60_000);
    const visit = (folder: string) => {
      for (const entry of fs.readdirSync(folder, { withFileTypes: true }))
        if (entry.isDirectory()) visit(path.join(folder, entry.name));
      fs.utimesSync(folder, past, past);
    };
    visit(project);
  }

  async function paths(): Promise<{ paths: string[]; listed: number; kept: number }> {
    walkCounts.listed = 0;
    walkCounts.kept = 0;
    const found = (await read()).map((file) => file.path);
    return { paths: found, listed: walkCounts.listed, kept: walkCounts.kept };
  }

  it('lists again only the folders whose entries changed, and finds what was added, removed or replaced', async () => {
    write('AGENTS.md', 'root');
    write('pkg/a/src/x.ts', 'x');
    write('pkg/b/CLAUDE.md', 'b');
    age();
    expect(await paths()).toEqual({ paths: ['AGENTS.md', 'pkg/b/CLAUDE.md'], listed: 5, kept: 0 });
    // Nothing changed: no folder is read again, and the files are the same.
    expect(await paths()).toEqual({ paths: ['AGENTS.md', 'pkg/b/CLAUDE.md'], listed: 0, kept: 5 });

    // A file added deep down: only its folder is listed again.
    write('pkg/a/src/AGENTS.md', 'deep');
    expect(await paths()).toEqual({
      paths: ['AGENTS.md', 'pkg/b/CLAUDE.md', 'pkg/a/src/AGENTS.md'],
      listed: 1,
      kept: 4,
    });
    // An AGENTS.md beside a CLAUDE.md takes its place; a removed one is gone; a new folder is walked into.
    // (Not aged first: setting a folder's time moves its ctime, and it would be listed again anyway.)
    write('pkg/b/AGENTS.md', 'b2');
    fs.rmSync(path.join(project, 'pkg/a/src/AGENTS.md'));
    write('pkg/c/AGENTS.md', 'c');
    expect(await paths()).toEqual({
      paths: ['AGENTS.md', 'pkg/b/AGENTS.md', 'pkg/c/AGENTS.md'],
      listed: 4, // pkg (a new entry), pkg/a/src (changed, and too fresh to keep before), pkg/b, pkg/c
      kept: 2,
    });
    // A folder replaced by a link to a folder outside the project is no longer walked into.
    age();
    fs.rmSync(path.join(project, 'pkg/c'), { recursive: true });
    fs.mkdirSync(path.join(dir, 'outside'));
    fs.writeFileSync(path.join(dir, 'outside', 'AGENTS.md'), 'outside');
    fs.symlinkSync(path.join(dir, 'outside'), path.join(project, 'pkg/c'));
    expect((await paths()).paths).toEqual(['AGENTS.md', 'pkg/b/AGENTS.md']);
  });

  it('lists a folder again when its time was set back after a change (ctime moves), and never keeps a fresh one', async () => {
    write('AGENTS.md', 'root');
    write('sub/x.ts', 'x');
    const past = new Date(Date.now() - 60_000);
    age();
    expect((await paths()).listed).toBe(2);
    // What tar or `cp -p` do: the folder filled, then its time restored.
    write('sub/AGENTS.md', 'sub');
    fs.utimesSync(path.join(project, 'sub'), past, past);
    expect(await paths()).toEqual({ paths: ['AGENTS.md', 'sub/AGENTS.md'], listed: 1, kept: 1 });
    // A folder changed just now may change again within the same timestamp: it is listed on every walk.
    write('sub/y.ts', 'y');
    expect((await paths()).listed).toBe(1);
    expect((await paths()).listed).toBe(1);
  });
});
