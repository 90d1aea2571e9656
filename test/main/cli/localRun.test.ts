import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, makeTempDir, removeTempDir } from '../../support/cli.js';
import { startKeel } from '../../support/keelProcess.js';
import { eventsOf, onlySessionId } from '../../support/sessionFixture.js';
import { TINY_ANSWER, writeTinyModel } from '../../support/tinyModel.js';

/*
 * Issue 34's CLI path: `keel run` on the suite's tiny GGUF, the whole turn through streamHarness (Keel's own
 * system prompt and tools, ~13k prompt tokens at one per character), the model in the bundled CLI's child
 * process. Its process is killed while the turn's first request is in flight: the turn goes on on a new one.
 * Slow-ish (one cold prompt of 13k tokens on one thread), so one turn proves it all.
 */
let dir: string;
let home: string;
let project: string;
let model: string;

beforeAll(async () => {
  dir = makeTempDir('keel-local-run-');
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(home);
  mkdirSync(project);
  writeFileSync(join(project, 'notes.txt'), 'remember the milk\n');
  // One thread: llama.cpp's threads spin at each barrier, which on a busy shared machine costs 10-20x.
  writeFileSync(join(home, 'settings.json'), JSON.stringify({ providers: { local: { threads: 1 } } }));
  model = join(dir, 'tiny.gguf');
  // Keel's prompt does not fit the tiny model's default 8k window.
  writeTinyModel(model, { contextLength: 32_768 });
  await ensureCliBuilt();
}, 180_000);

afterAll(() => removeTempDir(dir));

/** The model process the keel process forked, once it runs. */
async function workerOf(keelPid: number): Promise<number> {
  for (;;) {
    const children = (() => {
      try {
        return execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(keelPid)], { encoding: 'utf8' });
      } catch {
        return ''; // no child yet
      }
    })();
    const worker = /^\s*(\d+)\s.*worker\.js/m.exec(children);
    if (worker) return Number(worker[1]);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('keel run on a local model', () => {
  it('runs a whole turn with a tool call, surviving a crash of its model process', async () => {
    const run = startKeel(home, [
      'run',
      '--project',
      project,
      '--provider',
      'local',
      '--model',
      model,
      '--policy',
      'read-only',
      'What is in notes.txt?',
    ]);
    const first = await workerOf(run.child.pid!);
    process.kill(first, 'SIGKILL');
    const second = await workerOf(run.child.pid!);
    expect(second).not.toBe(first);

    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(0);
    // The grammar made the call valid for its schema; the tool ran (or refused its arguments) and the model
    // answered after its result.
    expect(ended.stderr).toMatch(/← \w+ (ok|error)/);
    expect(ended.stdout.trim().endsWith(TINY_ANSWER)).toBe(true);

    const events = eventsOf(home, onlySessionId(home));
    const answers = events.filter((event) => event.kind === 'assistant_message');
    expect(answers).toHaveLength(2);
    const [call, answer] = answers;
    expect(call!.toolCalls).toHaveLength(1);
    expect(events.filter((event) => event.kind === 'tool_result')).toHaveLength(1);
    expect(answer!.content).toBe(TINY_ANSWER);
    // The second request reused the first's prompt in the model's kept sequence.
    expect(answer!.usage?.cacheReadTokens).toBeGreaterThan(10_000);
    expect(answer!.usage?.inputTokens).toBeLessThan(1_000);
  }, 240_000);
});
