import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  classifyPullFailure,
  createLocalPulls,
  listLocalModels,
  localCatalogueBase,
  type LocalPullUpdate,
} from '../../../../main/core/harness/localModels.js';
import { LOCAL_CATALOGUE } from '../../../../main/providers/local/catalogue.js';
import { PullError } from '../../../../main/providers/local/download.js';
import { startGgufServer, type GgufServer } from '../../../support/ggufServer.js';
import { writeTinyModel } from '../../../support/tinyModel.js';

/* Issue 34: the app's background pulls of catalogue models, against the loopback GGUF server. */
let dir: string;
let sha: string;
let server: GgufServer;
const entry = LOCAL_CATALOGUE[0]!;
const fileName = entry.url.split('/').at(-1)!;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-local-pulls-'));
  writeTinyModel(join(dir, 'source.gguf'));
  const body = readFileSync(join(dir, 'source.gguf'));
  sha = createHash('sha256').update(body).digest('hex');
  server = await startGgufServer(body, sha, 2);
});

afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs one pull to its end; every update it reported. */
function pullOnce(home: string, base: string, id = entry.id, cancelAfter?: number) {
  const updates: LocalPullUpdate[] = [];
  return new Promise<LocalPullUpdate[]>((resolve) => {
    const pulls = createLocalPulls({
      home,
      baseOverride: base,
      intervalMs: 0,
      onUpdate: (update) => {
        updates.push(update);
        if (cancelAfter !== undefined && update.state === 'running' && update.received >= cancelAfter) {
          expect(pulls.cancel(id)).toBe(true);
        }
        if (update.state !== 'running') resolve(updates);
      },
    });
    pulls.start(id);
  });
}

describe('local model pulls', () => {
  it('pulls a catalogue model with progress, lists it as downloaded, and resumes after a cancel', async () => {
    const home = join(dir, 'home-a');
    const stopped = await pullOnce(home, server.base, entry.id, 200_000);
    expect(stopped.at(-1)).toEqual({ id: entry.id, state: 'cancelled' });
    expect(existsSync(join(home, 'models', `${fileName}.part`))).toBe(true);
    expect(listLocalModels(home).models.find((m) => m.id === entry.id)?.downloaded).toBe(false);

    const updates = await pullOnce(home, server.base);
    const running = updates.filter((u) => u.state === 'running');
    expect(running.length).toBeGreaterThan(1);
    expect(running.at(-1)).toMatchObject({ total: expect.any(Number) as number });
    expect(updates.at(-1)).toMatchObject({
      state: 'done',
      sha256: sha,
      path: join(home, 'models', fileName),
    });
    expect(server.ranges.at(-1)).toMatch(/^bytes=\d+-$/);
    mkdirSync(join(home, 'models'), { recursive: true });
    writeFileSync(join(home, 'models', 'mine.gguf'), 'x');
    const listed = listLocalModels(home);
    expect(listed.models.find((m) => m.id === entry.id)).toMatchObject({ downloaded: true, fileName });
    expect(listed.otherFiles).toEqual([join(home, 'models', 'mine.gguf')]);
  });

  it('names a wrong hash and an unreachable server as what to do about them', async () => {
    const wrong = await pullOnce(join(dir, 'home-b'), `${server.base}/wrong`);
    expect(wrong.at(-1)).toMatchObject({ state: 'failed', kind: 'wrong_hash' });
    const offline = await pullOnce(join(dir, 'home-c'), 'http://127.0.0.1:9');
    expect(offline.at(-1)).toMatchObject({ state: 'failed', kind: 'offline' });
    expect(classifyPullFailure(new PullError('the disk is full: /x needs 5 more bytes free')).kind).toBe(
      'disk_full',
    );
    expect(() => createLocalPulls({ home: dir, onUpdate: () => undefined }).start('nope')).toThrow(
      /not in the local model catalogue/,
    );
  });

  it('takes the test seam only as a loopback origin', () => {
    expect(localCatalogueBase({})).toBeUndefined();
    expect(localCatalogueBase({ KEEL_TEST_LOCAL_MODEL_BASE: 'http://127.0.0.1:8080' })).toBe(
      'http://127.0.0.1:8080',
    );
    for (const bad of ['https://evil.example', 'http://10.0.0.1:80', 'http://127.0.0.1:80/x/../y']) {
      expect(() => localCatalogueBase({ KEEL_TEST_LOCAL_MODEL_BASE: bad })).toThrow(/127\.0\.0\.1/);
    }
  });
});
