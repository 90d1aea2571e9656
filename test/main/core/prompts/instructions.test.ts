import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  INSTRUCTIONS_CAP_BYTES,
  readProjectInstructions,
  sameInstructionFiles,
} from '../../../../main/core/prompts/instructions.js';
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
