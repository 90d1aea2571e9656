import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError, stopLocalModels, type StreamEvent } from '../../../main/providers/index.js';
import { portLauncher, type PortChild } from '../../../main/providers/local/portLauncher.js';
import { LocalProvider } from '../../../main/providers/local/provider.js';
import { ensureLibraryBuilt, REPO_ROOT } from '../../support/cli.js';
import { TINY_ANSWER, writeTinyModel } from '../../support/tinyModel.js';

/*
 * The app's path to its model process (an Electron utility process: `portLauncher` over `utilityProcess.fork`, the
 * worker talking through `process.parentPort`), with Electron's fork replaced by a Node fork of the same shape:
 * the child gets a `parentPort` (MessageEvent-style `{data}` in, `postMessage` out) and nothing else answers, so
 * a worker that used Node's own IPC channel instead would be heard by no one. Only Electron's call is untested.
 */
let dir: string;
let provider: LocalProvider;
const WORKER = join(REPO_ROOT, 'dist', 'main', 'providers', 'local', 'worker.js');

/** A parentPort over Node's IPC channel; every message is wrapped so only the port path can be understood. */
const SHIM = `
import { pathToFileURL } from 'node:url';
process.parentPort = {
  on: (event, listener) => process.on(event, (raw) => { if (raw && 'toPort' in raw) listener({ data: raw.toPort }); }),
  postMessage: (message) => process.send({ fromPort: message }),
};
await import(pathToFileURL(process.argv[2]).href);
`;

/** Node's fork in the shape of Electron's UtilityProcess. */
function portChild(shim: string, script: string): PortChild {
  const child = fork(shim, [script], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  return {
    pid: child.pid,
    stderr: child.stderr,
    postMessage: (message) => {
      if (child.connected) child.send({ toPort: message });
    },
    on: (_event, listener) =>
      child.on('message', (raw) => listener((raw as { fromPort?: unknown }).fromPort)),
    once: (_event, listener) => child.once('exit', (code) => listener(code ?? -1)),
    kill: () => child.kill('SIGKILL'),
  };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keel-local-port-'));
  const modelPath = join(dir, 'tiny.gguf');
  writeTinyModel(modelPath);
  const shim = join(dir, 'shim.mjs');
  writeFileSync(shim, SHIM);
  await ensureLibraryBuilt(join(REPO_ROOT, 'main', 'providers', 'local', 'worker.ts'));
  provider = new LocalProvider(
    { path: modelPath, threads: 1, contextSize: 2048 },
    { script: WORKER, launcher: portLauncher((script) => portChild(shim, script)) },
  );
}, 180_000);

afterAll(() => {
  stopLocalModels();
  rmSync(dir, { recursive: true, force: true });
});

const readFile = {
  name: 'read_file',
  description: 'Read a file of the project',
  parameters: {
    type: 'object',
    properties: { path: { type: 'string' } },
    required: ['path'],
    additionalProperties: false,
  },
};

async function collect(messages: Parameters<LocalProvider['stream']>[0]['payload']['messages']) {
  const events: StreamEvent[] = [];
  for await (const event of provider.stream({
    payload: { messages },
    tools: [readFile],
    model: 'tiny',
    cacheKey: 'port',
  }))
    events.push(event);
  const last = events.at(-1);
  if (last?.type !== 'done') throw new Error(`no done event: ${JSON.stringify(events)}`);
  return { events, message: last.message };
}

describe('local provider over a port-speaking process (the utility-process path)', () => {
  it('loads, streams a grammar-valid call and answers after its result', async () => {
    const question = [{ role: 'user' as const, content: 'What is in notes.txt?' }];
    const first = await collect(question);
    const call = first.message.toolCalls[0];
    expect(call?.name).toBe('read_file');
    expect(first.events.some((event) => event.type === 'tool_arguments')).toBe(true);
    const second = await collect([
      ...question,
      { role: 'assistant', content: first.message.content, toolCalls: first.message.toolCalls },
      { role: 'tool', toolCallId: call!.id, content: 'error: no such file' },
    ]);
    expect(second.message.content).toBe(TINY_ANSWER);
  });

  it('says how the process ended when it dies mid-request, and the next request starts a new one', async () => {
    const stream = provider.stream({
      payload: { messages: [{ role: 'user', content: 'Say something long.' }] },
      tools: [],
      model: 'tiny',
      maxOutputTokens: 1_000_000,
      cacheKey: 'port-crash',
    });
    const killed = provider.pid;
    let sent = false;
    const failure = await (async () => {
      try {
        for await (const event of stream) {
          if (event.type === 'text' && !sent) {
            sent = true;
            process.kill(killed!, 'SIGKILL');
          }
        }
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(failure).toBeInstanceOf(ProviderError);
    expect((failure as ProviderError).retryable).toBe(true);
    expect((failure as ProviderError).message).toMatch(/local model process stopped \(exit code -1/);
    const after = await collect([{ role: 'user', content: 'What is in notes.txt?' }]);
    expect(after.message.toolCalls[0]?.name).toBe('read_file');
    expect(provider.pid).not.toBe(killed);
  });
});
