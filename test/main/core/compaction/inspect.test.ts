import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCompaction } from '../../../../main/core/compaction/compact.js';
import { inspectCompactions, inspectSessionCompactions } from '../../../../main/core/compaction/inspect.js';
import { loadEstimator } from '../../../../main/core/compaction/tokens.js';
import type { NewEvent } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { projectPayload, UnknownCompactionError } from '../../../../main/core/projection/index.js';
import { createProvider } from '../../../../main/providers/index.js';
import { ProviderServer } from '../../../support/providerServer.js';
import { summaryFor } from './scripted.js';

let dir: string;
let log: SessionLog;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-inspect-'));
  log = SessionLog.create(path.join(dir, 'home'), {
    projectFolder: dir,
    provider: 'openai-compatible',
    model: 'local-model',
    baseUrl: 'http://127.0.0.1:9/v1',
    contextWindow: 4000,
    toolMode: 'read-only',
    policy: 'read-only',
    systemPrompt: 'You are Keel.',
  });
});

afterEach(() => {
  log.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const compaction = (through: number, summary: string, supersedes?: number): NewEvent => ({
  kind: 'compaction',
  fromSeq: 2,
  through,
  summary,
  pinned: 'GOAL',
  tokensBefore: 3000,
  tokensAfter: 900,
  model: 'local-model',
  ...(supersedes ? { supersedes } : {}),
});

function appendTurns(count: number): void {
  for (let i = 0; i < count; i++) {
    log.append([
      { kind: 'user_message', content: i === 0 ? 'GOAL' : `question ${i}` },
      { kind: 'assistant_message', content: `answer ${i}`, toolCalls: [] },
    ]);
  }
}

describe('the compaction inspector', () => {
  it('shows each compaction with its summary, the exact events it replaced, tokens and whether it is in effect', () => {
    appendTurns(2); // seqs 2..5
    log.append(compaction(5, 'first summary')); // 6
    appendTurns(2); // 7..10
    log.append(compaction(9, 'second summary')); // 11
    log.append(compaction(9, 'second summary, re-run', 11)); // 12
    appendTurns(1); // 13..14

    const events = log.read();
    const records = inspectCompactions(events);
    expect(records.map((r) => [r.seq, r.status, r.supersededBy, r.supersedes])).toEqual([
      [6, 'superseded', 11, undefined],
      [11, 'superseded', 12, undefined],
      [12, 'in_effect', undefined, 11],
    ]);
    const [first, second, rerun] = records;
    expect(first).toMatchObject({
      fromSeq: 2,
      through: 5,
      summary: 'first summary',
      pinned: 'GOAL',
      tokensBefore: 3000,
      tokensAfter: 900,
      model: 'local-model',
    });
    expect(first?.replaced.events).toEqual(events.filter((e) => e.seq >= 2 && e.seq <= 5));
    // The replaced range of a later compaction includes an earlier compaction event: shown as stored.
    expect(second?.replaced.events.map((e) => e.seq)).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
    // Rebuilt without the one in effect: the payload falls back to the compaction it re-ran.
    expect(rerun?.payloadWithout).toEqual(
      projectPayload(
        events.filter((e) => e.seq !== 12),
        { system: 'You are Keel.' },
      ),
    );
    expect(JSON.stringify(rerun?.payloadWithout)).toContain('second summary');
    expect(JSON.stringify(rerun?.payloadWithout)).not.toContain('re-run');
    // Without a superseded one, nothing changes.
    expect(first?.payloadWithout).toEqual(projectPayload(events, { system: 'You are Keel.' }));
  });

  it('reads the same from a log opened read-only, while the writer holds it', () => {
    appendTurns(2);
    log.append(compaction(5, 'only summary'));
    const reader = SessionLog.open(path.join(dir, 'home'), log.id);
    try {
      expect(inspectSessionCompactions(reader)).toEqual(inspectCompactions(log.read()));
    } finally {
      reader.close();
    }
  });

  it('re-runs a compaction over the same range from the originals; both stay, the new one is in effect', async () => {
    const server = await new ProviderServer({
      respond: (request) => ({ kind: 'reply', text: summaryFor(request) }),
    }).start();
    try {
      appendTurns(3); // 2..7
      log.append(compaction(5, 'old summary that must not be reused')); // 8
      appendTurns(1); // 9..10
      const events = log.read();
      const pin = {
        provider: 'openai-compatible' as const,
        model: 'local-model',
        baseUrl: server.openaiBaseUrl,
        contextWindow: 4000,
      };
      const outcome = await buildCompaction({
        events,
        pin,
        provider: createProvider(pin, {}, {}),
        estimator: await loadEstimator(pin),
        systemPrompt: 'You are Keel.',
        tools: [],
        keepRecent: 0.2,
        tokensBefore: 2000,
        mode: 'manual',
        rerun: 8,
      });
      expect(outcome.status).toBe('compacted');
      if (outcome.status !== 'compacted') return;
      expect(outcome.event).toMatchObject({ fromSeq: 2, through: 5, supersedes: 8, pinned: 'GOAL' });
      expect(server.requests.map((r) => r.raw).join('')).not.toContain('old summary');
      log.append(outcome.event);
      const records = inspectSessionCompactions(log);
      expect(records.map((r) => [r.seq, r.status])).toEqual([
        [8, 'superseded'],
        [11, 'in_effect'],
      ]);
      await expect(
        buildCompaction({
          events,
          pin,
          provider: createProvider(pin, {}, {}),
          estimator: await loadEstimator(pin),
          systemPrompt: '',
          tools: [],
          keepRecent: 0.2,
          tokensBefore: 1,
          mode: 'manual',
          rerun: 3,
        }),
      ).rejects.toBeInstanceOf(UnknownCompactionError);
    } finally {
      await server.close();
    }
  });
});
