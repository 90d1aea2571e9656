import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, makeTempDir, removeTempDir } from '../../support/cli.js';
import { startGgufServer, type GgufServer } from '../../support/ggufServer.js';
import { keel, startKeel } from '../../support/keelProcess.js';
import { writeTinyModel } from '../../support/tinyModel.js';

/* `keel models local pull|list|rm` as a child process against a loopback server, killed mid-download. */
let dir: string;
let body: Buffer;
let sha: string;
let server: GgufServer;

beforeAll(async () => {
  dir = makeTempDir('keel-local-models-');
  writeTinyModel(join(dir, 'source.gguf'));
  body = readFileSync(join(dir, 'source.gguf'));
  sha = createHash('sha256').update(body).digest('hex');
  // 64 KiB every 40 ms: about a second for the file, time to kill the CLI halfway.
  server = await startGgufServer(body, sha, 40);
  await ensureCliBuilt();
}, 180_000);

afterAll(async () => {
  await server.close();
  removeTempDir(dir);
});

describe('keel models local', () => {
  it('pulls with progress, resumes after a kill, lists and removes', async () => {
    const home = join(dir, 'home');
    const url = `${server.base}/models/tiny.gguf`;
    const first = startKeel(home, ['models', 'local', 'pull', url]);
    await first.waitFor(/MB at .* s left/, 'stderr');
    first.child.kill('SIGKILL');
    await first.done;
    const part = join(home, 'models', 'tiny.gguf.part');
    const kept = statSync(part).size;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(body.length);

    server.ranges.length = 0;
    const second = await keel(home, ['models', 'local', 'pull', url]);
    expect(second.code).toBe(0);
    expect(server.ranges).toEqual([`bytes=${kept}-`]);
    expect(second.stdout).toContain(`sha256 ${sha}`);
    expect(readFileSync(join(home, 'models', 'tiny.gguf')).equals(body)).toBe(true);

    const list = await keel(home, ['models', 'local', 'list']);
    expect(list.stdout).toMatch(/qwen2\.5-coder-7b/);
    // The machine as the model process found it (the bundled CLI's worker loaded the runtime), and the pick.
    const gb = (os.totalmem() / 1024 ** 3).toFixed(1);
    expect(list.stdout).toMatch(
      new RegExp(
        `^This machine: ${gb} GB RAM, (GPU \\w+ .+|no GPU backend \\(CPU only\\))\\. Suggested: qwen2\\.5-coder-\\d+b \\(`,
        'm',
      ),
    );
    expect(list.stdout).toContain(join(home, 'models', 'tiny.gguf'));

    const removed = await keel(home, ['models', 'local', 'rm', 'tiny.gguf']);
    expect(removed.code).toBe(0);
    expect(existsSync(join(home, 'models', 'tiny.gguf'))).toBe(false);
  }, 120_000);

  it('keel run with no provider names the one command that gets the local default', async () => {
    const project = join(dir, 'project');
    mkdirSync(project, { recursive: true });
    const run = await keel(join(dir, 'home-empty'), ['run', '--project', project, 'hello']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(
      /keel models local pull qwen2\.5-coder-\d+b, then keel run --provider local --model/,
    );
  }, 60_000);

  it('refuses a file whose hash is not the published one', async () => {
    const home = join(dir, 'home-wrong');
    const run = await keel(home, ['models', 'local', 'pull', `${server.base}/wrong/tiny.gguf`]);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toMatch(/is not the published file/);
    expect(existsSync(join(home, 'models', 'tiny.gguf'))).toBe(false);
  }, 60_000);
});
