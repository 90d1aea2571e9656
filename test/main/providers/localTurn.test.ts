import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness } from '../../../main/core/harness/harness.js';
import { streamHarness } from '../../../main/core/harness/stream.js';
import type { HarnessStreamPart } from '../../../main/core/harness/types.js';
import { sha256File } from '../../../main/providers/local/host.js';
import { LocalProvider } from '../../../main/providers/local/provider.js';
import { stopLocalModels, type ModelProvider } from '../../../main/providers/index.js';
import { ensureLibraryBuilt, REPO_ROOT } from '../../support/cli.js';
import { TINY_ANSWER, writeTinyModel } from '../../support/tinyModel.js';
import { makeRepo, makeTemp } from '../core/persistent/support.js';

/*
 * Whole turns on the tiny GGUF through `streamHarness`, the way a host runs them: the model calls a tool (its
 * grammar makes the call valid), the harness runs it, the model answers. A crash of the model process mid-turn
 * is an error the session survives: the next turn resumes on a new process.
 */
const WORKER = path.join(REPO_ROOT, 'dist', 'main', 'providers', 'local', 'worker.js');
let dir: string;
let modelPath: string;
let sha256: string;
const providers: LocalProvider[] = [];

beforeAll(async () => {
  dir = makeTemp('keel-local-turn-');
  modelPath = path.join(dir, 'tiny.gguf');
  writeTinyModel(modelPath, { contextLength: 32_768 });
  sha256 = await sha256File(modelPath);
  await ensureLibraryBuilt(path.join(REPO_ROOT, 'main', 'providers', 'local', 'worker.ts'));
}, 180_000);

afterAll(() => {
  stopLocalModels();
  fs.rmSync(dir, { recursive: true, force: true });
});

function harnessIn(name: string) {
  const home = path.join(dir, name, 'home');
  const project = makeRepo(path.join(dir, name, 'project'), { 'notes.txt': 'remember the milk\n' });
  return createHarness({
    home,
    model: {
      provider: 'local',
      model: 'keel-tiny',
      contextWindow: 32_768,
      local: { path: modelPath, sha256, threads: 1, contextSize: 32_768 },
    },
    persistentDirs: { project: { path: project, commit: 'manual' } },
    policy: 'read-only',
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    // A short prompt and one tool: this tokenizer spends a token per character, and Keel's full prompt with every
    // tool's documentation would take a busy single thread minutes to evaluate.
    systemPrompt: 'You are a coding agent.',
    // The pinned file and hash, with one thread (a busy 2-core machine) and the worker compiled in dist/.
    createProvider: (pin): ModelProvider => {
      const provider = new LocalProvider({ ...pin.local!, threads: 1, sequences: 1 }, { script: WORKER });
      providers.push(provider);
      return {
        kind: 'local',
        stream: (request) => {
          return provider.stream({
            ...request,
            tools: request.tools.filter((tool) => tool.name === 'read_file'),
          });
        },
      };
    },
  });
}

describe('a turn on a local model', () => {
  it('runs a tool call and the answer through streamHarness, with reused tokens in the usage', async () => {
    const harness = harnessIn('turn');
    const parts: HarnessStreamPart[] = [];
    const stream = streamHarness({
      harness,
      session: 's',
      messages: [{ role: 'user', content: 'read notes.txt' }],
    });
    for await (const part of stream) parts.push(part);
    const result = await stream.result;
    expect(result.outcome).toEqual({ status: 'completed', text: TINY_ANSWER });
    const calls = parts.filter((p) => p.type === 'tool_call');
    expect(calls.length).toBe(1);
    const results = result.events.filter((e) => e.kind === 'tool_result');
    expect(results).toHaveLength(1);
    const messages = result.events.filter((e) => e.kind === 'assistant_message');
    expect(messages).toHaveLength(2);
    // The second request of the turn read the first one's prefix from the kept KV cache.
    const second = messages[1]!;
    expect(second.kind === 'assistant_message' && second.usage?.cacheReadTokens).toBeGreaterThan(
      second.kind === 'assistant_message' ? (second.usage?.inputTokens ?? 0) * 5 : Infinity,
    );
  }, 120_000);

  it('survives a crash of the model process mid-turn and resumes on a new one', async () => {
    const harness = harnessIn('crash');
    let killed: number | undefined;
    const first = streamHarness({
      harness,
      session: 'c',
      messages: [{ role: 'user', content: 'read notes.txt' }],
      onPart: (part) => {
        if (part.type === 'tool_call' && killed === undefined) {
          killed = providers.at(-1)?.pid;
          process.kill(killed!, 'SIGKILL');
        }
      },
    });
    const failed = await first.result;
    expect(killed).toBeDefined();
    expect(failed.outcome.status).toBe('failed');
    expect(
      failed.events.some((e) => e.kind === 'error' && /local model process stopped/.test(e.message)),
    ).toBe(true);

    const again = await streamHarness({
      harness,
      session: 'c',
      messages: [{ role: 'user', content: 'go on' }],
    }).result;
    expect(again.outcome).toEqual({ status: 'completed', text: TINY_ANSWER });
    expect(providers.at(-1)?.pid).not.toBe(killed);
  }, 120_000);
});
