import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { SessionLog } from '../../../main/core/log/sessionLog.js';
import { ensureCliBuilt, makeTempDir, removeTempDir } from '../../support/cli.js';
import { keel, startKeel, type KeelProcess } from '../../support/keelProcess.js';
import { ProviderServer } from '../../support/providerServer.js';

let dir: string;
let home: string;
let rendererDir: string;
let provider: ProviderServer;
let serving: KeelProcess | undefined;

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

beforeEach(async () => {
  dir = fs.realpathSync(makeTempDir('keel-serve-cli-'));
  home = path.join(dir, 'home');
  rendererDir = path.join(dir, 'renderer');
  fs.mkdirSync(rendererDir);
  fs.mkdirSync(path.join(dir, 'project'));
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html><title>Keel</title>');
  provider = await new ProviderServer().start();
});

afterEach(async () => {
  if (serving && serving.child.exitCode === null) {
    serving.child.kill('SIGKILL');
    await serving.done;
  }
  serving = undefined;
  await provider.close();
  removeTempDir(dir);
});

async function serve(extra: string[] = []): Promise<URL> {
  serving = startKeel(home, ['serve', '--renderer', rendererDir, ...extra]);
  await serving.waitFor(/http:\/\/127\.0\.0\.1:\d+\/\?token=\S+\n/);
  return new URL(serving.stdout().trim());
}

function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      })
      .on('error', reject);
  });
}

/** A minimal client of the ws protocol: calls by id, collects pushes. */
async function connect(url: URL) {
  const socket = new WebSocket(`ws://${url.host}/ws?token=${url.searchParams.get('token') ?? ''}`);
  const results = new Map<number, unknown>();
  const pushes: { topic: string; payload: Record<string, unknown> }[] = [];
  socket.on('message', (data: Buffer) => {
    const message = JSON.parse(data.toString('utf8')) as {
      id?: number;
      result?: unknown;
      topic?: string;
      payload?: never;
    };
    if (message.id !== undefined) results.set(message.id, message.result);
    else if (message.topic) pushes.push({ topic: message.topic, payload: message.payload ?? {} });
  });
  await new Promise((resolve, reject) => socket.on('open', resolve).on('error', reject));
  let next = 1;
  const call = async (channel: string, input: unknown) => {
    const id = next++;
    socket.send(JSON.stringify({ id, channel, input }));
    for (let waited = 0; !results.has(id); waited += 10) {
      if (waited > 15_000) throw new Error(`no answer to ${channel}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return results.get(id) as { ok: boolean; value?: Record<string, unknown>; error?: { code: string } };
  };
  return { socket, call, pushes };
}

describe('keel serve', () => {
  it('prints a tokened 127.0.0.1 URL, refuses requests without the token, and shares the home with the CLI', async () => {
    const url = await serve();
    expect(serving?.stderr()).toMatch(/serving on 127\.0\.0\.1 only/);
    expect(await status(`http://${url.host}/`)).toBe(401);
    expect(await status(url.toString())).toBe(200);

    const client = await connect(url);
    const created = await client.call('sessions.create', {
      projectFolder: path.join(dir, 'project'),
      provider: 'openai-compatible',
      baseUrl: provider.openaiBaseUrl,
      model: 'scripted-model',
      contextWindow: 8000,
    });
    const id = (created.value?.['session'] as { id: string }).id;
    // The server holds no lease while idle: the CLI can continue the same session in the same home.
    provider.enqueue({ kind: 'reply', text: 'from the CLI' });
    const cli = await keel(home, ['run', '--session', id, 'hello from the terminal']);
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('from the CLI');
    const page = await client.call('events.page', { sessionId: id });
    expect((page.value?.['events'] as { kind: string }[]).map((e) => e.kind)).toEqual([
      'session_created',
      'user_message',
      'assistant_message',
    ]);
    client.socket.close();
  });

  it('on SIGTERM stops the running turn (interruption recorded), releases the lease and exits 0', async () => {
    const url = await serve();
    const client = await connect(url);
    const created = await client.call('sessions.create', {
      projectFolder: path.join(dir, 'project'),
      provider: 'openai-compatible',
      baseUrl: provider.openaiBaseUrl,
      model: 'scripted-model',
      contextWindow: 8000,
    });
    const id = (created.value?.['session'] as { id: string }).id;
    provider.enqueue({
      kind: 'reply',
      text: 'one two three four five six seven eight nine ten',
      delayMs: 200,
    });
    expect((await client.call('turns.send', { sessionId: id, prompt: 'count slowly' })).ok).toBe(true);
    for (let waited = 0; !client.pushes.some((p) => p.topic === 'turn.delta'); waited += 20) {
      if (waited > 15_000) throw new Error('no delta arrived');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    serving?.child.kill('SIGTERM');
    const ended = await serving?.done;
    expect(ended?.code, ended?.stderr).toBe(0);
    expect(ended?.stderr).toMatch(/SIGTERM: stopping 1 running turn, shutting down/);
    const log = SessionLog.open(home, id, { write: true });
    try {
      const events = log.read();
      expect(events[events.length - 1]?.kind).toBe('interrupted');
    } finally {
      log.close();
    }
  });

  it('refuses a port that is taken, in one line', async () => {
    const url = await serve();
    const second = await keel(home, ['serve', '--renderer', rendererDir, '--port', url.port]);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(new RegExp(`keel: port ${url.port} is in use: choose another with --port`));
  });
});
