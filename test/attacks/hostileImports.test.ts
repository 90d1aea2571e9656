import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt, makeTempDir, removeTempDir } from '../support/cli.js';
import { keel } from '../support/keelProcess.js';

/*
 * Attack corpus: an export file built to crash the importer. An event line nested 200,000 arrays deep
 * used to end `keel import` with exit 1 and "Maximum call stack size exceeded"; it is a bad line, named,
 * exit 2, and nothing is written.
 */

let dir: string;
let home: string;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(() => {
  dir = makeTempDir('keel-attack-import-');
  home = path.join(dir, 'home');
});

afterEach(() => {
  removeTempDir(dir);
});

describe('hostile import files', () => {
  it('names a line nested 200,000 deep as bad input and writes nothing', async () => {
    const depth = 200_000;
    const created = {
      seq: 1,
      kind: 'session_created',
      at: '2031-01-01T00:00:00.000Z',
      sessionId: 'x',
      projectFolder: dir,
      provider: 'openai-compatible',
      model: 'm',
      baseUrl: 'http://127.0.0.1:9/v1',
      contextWindow: 32_000,
      toolMode: 'write',
      policy: 'ask',
    };
    const deep = `{"seq":2,"kind":"user_message","at":"2031-01-01T00:00:01.000Z","content":"hi","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const file = path.join(dir, 'deep.jsonl');
    fs.writeFileSync(file, `${JSON.stringify(created)}\n${deep}\n`);
    const result = await keel(home, ['import', file]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('line 2: nested deeper than 64 levels (no event is): not an event');
    expect(result.stderr).not.toMatch(/call stack/i);
    expect(
      fs.existsSync(path.join(home, 'sessions')) && fs.readdirSync(path.join(home, 'sessions')).length > 0,
    ).toBe(false);
  }, 60_000);
});
