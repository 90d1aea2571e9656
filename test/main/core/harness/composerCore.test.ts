import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listCommands } from '../../../../main/core/harness/commands.js';
import { completeMentions, mentionRank } from '../../../../main/core/harness/mentions.js';
import { checkPromptSize, PromptTooLargeError } from '../../../../main/core/harness/newTurn.js';
import { makeTempDir, removeTempDir } from '../../../support/cli.js';

/*
 * Issue 37, the core under the composer: Keel's `/` commands, `@` mentions of a real project folder (a git
 * repository with a .gitignore, and a plain folder), and the prompt-size rule every host runs before a turn.
 */

let dir: string;
const write = (file: string, text = 'x\n') => {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
};

beforeAll(() => {
  dir = fs.realpathSync(makeTempDir('keel-composer-core-'));
});
afterAll(() => removeTempDir(dir));

describe('the / commands', () => {
  it('lists Keel’s own actions first; a project command cannot shadow one of them', () => {
    const names = listCommands().map((command) => command.name);
    expect(names).toEqual(
      expect.arrayContaining(['compact', 'model', 'effort', 'fork', 'stop', 'resume', 'rename']),
    );
    expect(
      listCommands().every((command) => command.source === 'keel' && command.description.length > 10),
    ).toBe(true);
    const withProject = listCommands([
      { name: 'stop', description: 'a project trying to take /stop', source: 'project' },
      { name: 'review', description: 'Review the diff', source: 'project' },
    ]);
    expect(withProject.filter((command) => command.name === 'stop')).toEqual([
      expect.objectContaining({ source: 'keel' }),
    ]);
    expect(withProject.at(-1)).toMatchObject({ name: 'review', source: 'project' });
  });
});

describe('the @ mentions', () => {
  it('completes files and folders of a git project, leaving out what .gitignore names and what lies outside', async () => {
    const repo = path.join(dir, 'repo');
    write(path.join(repo, 'src', 'app.ts'));
    write(path.join(repo, 'src', 'util', 'apply.ts'));
    write(path.join(repo, 'README.md'));
    write(path.join(repo, 'dist', 'app.js'));
    write(path.join(repo, 'node_modules', 'left', 'app.js'));
    write(path.join(repo, '.env'), 'SECRET=1\n');
    write(path.join(repo, '.gitignore'), 'dist/\nnode_modules/\n.env\n');
    write(path.join(dir, 'outside-app.ts'));
    fs.symlinkSync(dir, path.join(repo, 'up'));
    expect(spawnSync('git', ['init', '-q'], { cwd: repo }).status).toBe(0);
    // The repository's config is the project's word, not the user's: the listing's git runs none of it.
    const marker = path.join(dir, 'FSMONITOR-RAN');
    expect(spawnSync('git', ['config', 'core.fsmonitor', `touch ${marker}`], { cwd: repo }).status).toBe(0);

    const found = (await completeMentions(repo, 'app')).map((mention) => mention.path);
    expect(found[0]).toBe('src/app.ts');
    expect(found).toContain('src/util/apply.ts');
    expect(found.some((file) => file.startsWith('dist') || file.includes('node_modules'))).toBe(false);
    expect(found.some((file) => file.includes('outside'))).toBe(false);
    expect(await completeMentions(repo, '.env')).toEqual([]);
    expect(await completeMentions(repo, 'util')).toContainEqual({ path: 'src/util/', kind: 'folder' });
    // A folder of the project is completed relative to it: from the repository's sub-folder too.
    expect((await completeMentions(path.join(repo, 'src'), 'app')).map((mention) => mention.path)).toEqual([
      'app.ts',
      'util/apply.ts',
    ]);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('walks a folder that is not a repository, skipping node_modules and its .gitignore’s entries', async () => {
    const plain = path.join(dir, 'plain');
    write(path.join(plain, 'lib', 'main.py'));
    write(path.join(plain, 'build', 'main.o'));
    write(path.join(plain, 'node_modules', 'x', 'main.js'));
    write(path.join(plain, '.gitignore'), '# build output\nbuild\n');
    const found = (await completeMentions(plain, 'main')).map((mention) => mention.path);
    expect(found).toEqual(['lib/main.py']);
  });

  it('ranks a name starting with the query above one containing it, then the path, then scattered letters', () => {
    const ranks = ['src/app.ts', 'src/myapp.ts', 'app/index.ts', 'a/p/p.ts'].map((file) =>
      mentionRank(file, 'app'),
    );
    expect(ranks[0]).toBeLessThan(ranks[1] as number);
    expect(ranks[1]).toBeLessThan(ranks[2] as number);
    expect(ranks[2]).toBeLessThan(ranks[3] as number);
    expect(mentionRank('src/index.ts', 'zzz')).toBeUndefined();
  });
});

describe('the prompt-size rule', () => {
  const pin = { provider: 'openai-compatible' as const, model: 'small-model', contextWindow: 32_000 };

  it('passes a prompt that fits without loading a vocabulary, and one that fits by count', async () => {
    await expect(checkPromptSize('Add a rate limiter to the login route.', pin)).resolves.toBeUndefined();
    // 60 KB of words: over the byte bound (24,000), under the count.
    await expect(checkPromptSize('word '.repeat(12_000), pin)).resolves.toBeUndefined();
  });

  it('refuses a 1 MB prompt with a sentence for people: the size, the window, what to do', async () => {
    const error = await checkPromptSize('word '.repeat(210_000), pin).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PromptTooLargeError);
    const message = (error as Error).message;
    expect(message).toMatch(/^This message is too long for small-model: it is about [\d,]+ tokens/);
    expect(message).toContain('at most 24,000 of the model’s 32,000-token context window'.replace('’', "'"));
    expect(message).toContain('Nothing was sent');
    expect(message).not.toMatch(/invalid|zod|String must/i);
    expect((error as PromptTooLargeError).code).toBe('invalid_input');
  });
});
