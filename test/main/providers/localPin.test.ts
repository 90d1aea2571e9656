import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256File } from '../../../main/providers/local/host.js';
import { localModelPin } from '../../../main/providers/local/pin.js';
import { writeTinyModel } from '../../support/tinyModel.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'keel-local-pin-'));
  mkdirSync(join(dir, 'home', 'models'), { recursive: true });
  writeTinyModel(join(dir, 'home', 'models', 'tiny.gguf'), { contextLength: 16_384 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('localModelPin', () => {
  it('pins the file, its hash and a window from the GGUF metadata, by path or by name in the home', async () => {
    const file = join(dir, 'home', 'models', 'tiny.gguf');
    const byPath = await localModelPin(join(dir, 'home'), file);
    expect(byPath).toEqual({
      provider: 'local',
      model: 'tiny',
      contextWindow: 16_384,
      local: { path: file, sha256: await sha256File(file), contextSize: 16_384 },
    });
    expect(await localModelPin(join(dir, 'home'), 'tiny.gguf', 4096)).toMatchObject({
      contextWindow: 4096,
      local: { path: file, contextSize: 4096 },
    });
  });

  it('names the pull command for a model that is not there', async () => {
    await expect(localModelPin(join(dir, 'home'), 'qwen2.5-coder-7b')).rejects.toThrow(
      /keel models local pull qwen2\.5-coder-7b/,
    );
  });
});
