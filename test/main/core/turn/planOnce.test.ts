import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Policy } from '../../../../main/common/events.js';
import type { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { runTurn, type TurnHost } from '../../../../main/core/turn/engine.js';
import { detectSandbox, type SandboxInfo } from '../../../../main/sandbox/box.js';
import type * as SandboxPaths from '../../../../main/sandbox/paths.js';
import type * as DiffText from '../../../../main/tools/diffText.js';
import {
  createScriptedSession,
  scriptedTurnHost,
  useSessionFixture,
} from '../../../support/sessionFixture.js';

// One plan per file change (FRONT_DOOR.md, move 5): a write_file the policy lets run is planned once (read,
// diffed, hashed) by the gate's preview, and that plan is what is written; its path is resolved by the
// plan's own read and once more by the confined writer (which pins the write to the checked real path).
// Counted on the real functions, wrapped: every diff a plan makes, every confined resolve, read and write.

const counts = vi.hoisted(() => ({ diffs: 0, resolves: 0, reads: 0, writes: 0 }));

vi.mock('../../../../main/tools/diffText.js', async (importOriginal) => {
  const real = await importOriginal<typeof DiffText>();
  return {
    ...real,
    boundedDiff: (...args: Parameters<typeof real.boundedDiff>) => {
      counts.diffs++;
      return real.boundedDiff(...args);
    },
  };
});

vi.mock('../../../../main/sandbox/paths.js', async (importOriginal) => {
  const real = await importOriginal<typeof SandboxPaths>();
  return {
    ...real,
    resolveInWorkspace: (...args: Parameters<typeof real.resolveInWorkspace>) => {
      counts.resolves++;
      return real.resolveInWorkspace(...args);
    },
    readFileConfined: (...args: Parameters<typeof real.readFileConfined>) => {
      counts.reads++;
      return real.readFileConfined(...args);
    },
    writeFileConfined: (...args: Parameters<typeof real.writeFileConfined>) => {
      counts.writes++;
      return real.writeFileConfined(...args);
    },
  };
});

let sandbox: SandboxInfo;
const logs: SessionLog[] = [];

beforeAll(async () => {
  sandbox = await detectSandbox();
});

const fx = useSessionFixture('keel-plan-once-', {
  prepare: ({ project }) => {
    mkdirSync(path.join(project, 'src'), { recursive: true });
    writeFileSync(path.join(project, 'src', 'app.ts'), 'export const a = 1;\n');
  },
  cleanup: () => {
    for (const log of logs.splice(0)) log.close();
  },
});

function createSession(policy: Policy): SessionLog {
  const log = createScriptedSession(fx, { policy, toolMode: 'write' });
  logs.push(log);
  return log;
}

const hostFor = (log: SessionLog): TurnHost => scriptedTurnHost(log, { workspace: fx.project, sandbox });

beforeEach(() => {
  Object.assign(counts, { diffs: 0, resolves: 0, reads: 0, writes: 0 });
});

describe('one plan per file change', () => {
  it('an auto-approved write_file is planned once and written from that plan', async () => {
    const log = createSession('auto-edit');
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'w1', name: 'write_file', arguments: { path: 'src/app.ts', content: 'export const a = 2;\n' } },
      ],
    });
    fx.server.enqueue({ kind: 'reply', text: 'Done.' });
    // Counted from the turn's start: nothing else in it plans, reads or writes a file through the tools.
    expect(await runTurn(hostFor(log), { prompt: 'bump a' })).toEqual({ status: 'completed', text: 'Done.' });
    expect(readFileSync(path.join(fx.project, 'src', 'app.ts'), 'utf8')).toBe('export const a = 2;\n');
    const result = log.read().find((event) => event.kind === 'tool_result');
    expect(result).toMatchObject({ content: 'Updated src/app.ts (+1 -1 lines)' });
    // Before: three plans (the gate's preview, execute's preview, applyOnce's re-plan), ten resolutions.
    expect(counts).toEqual({ diffs: 1, resolves: 1, reads: 1, writes: 1 });
  });

  it('an approved write_file is planned again after the approval (time passed), once', async () => {
    const log = createSession('ask');
    fx.server.enqueue({
      kind: 'reply',
      toolCalls: [
        { id: 'w1', name: 'write_file', arguments: { path: 'src/app.ts', content: 'export const a = 3;\n' } },
      ],
    });
    expect((await runTurn(hostFor(log), { prompt: 'bump a' })).status).toBe('awaiting_approval');
    expect(counts.diffs).toBe(1);
    const request = log.read().find((event) => event.kind === 'approval_request');
    log.append({ kind: 'approval_granted', requestSeq: request?.seq ?? 0, scope: 'once' });
    Object.assign(counts, { diffs: 0, resolves: 0, reads: 0, writes: 0 });
    fx.server.enqueue({ kind: 'reply', text: 'Done.' });
    expect(await runTurn(hostFor(log))).toEqual({ status: 'completed', text: 'Done.' });
    expect(readFileSync(path.join(fx.project, 'src', 'app.ts'), 'utf8')).toBe('export const a = 3;\n');
    expect(counts).toEqual({ diffs: 1, resolves: 1, reads: 1, writes: 1 });
  });
});
