import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapSource } from '../../../../main/core/imports/mapSource.js';
import { SourceMapper } from '../../../../main/core/imports/sourceMapper.js';
import { claudeV10, codexEnveloped } from '../../../support/historyFixtures.js';
import { ensureLibraryBuilt, REPO_ROOT } from '../../../support/cli.js';

// Issue 35: the history import maps its next file on a thread of its own (core/imports/sourceMapper.ts).

const WORKER = path.join(REPO_ROOT, 'dist', 'main', 'core', 'imports', 'mapWorker.js');
let dir: string;
beforeAll(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'keel-source-mapper-')));
  await ensureLibraryBuilt(path.join(REPO_ROOT, 'main', 'core', 'imports', 'mapWorker.ts'));
}, 240_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('SourceMapper', () => {
  it('maps on its thread exactly what mapping here gives (images as bytes, problems, digest)', async () => {
    const claude = {
      tool: 'claude-code' as const,
      file: claudeV10(path.join(dir, 's.jsonl'), '/work/p'),
      agentFiles: [],
    };
    const codex = {
      tool: 'codex' as const,
      file: codexEnveloped(path.join(dir, 'rollout-2025-09-01T09-00-00-y.jsonl'), '/work/p'),
      agentFiles: [],
    };
    const mapper = new SourceMapper(WORKER);
    try {
      expect(mapper.threaded).toBe(true);
      for (const source of [claude, codex]) {
        const threaded = await mapper.map(source.tool, source);
        expect(threaded).toEqual(await mapSource(source.tool, source));
        for (const file of threaded.mapped?.files ?? []) expect(Buffer.isBuffer(file.data)).toBe(true);
      }
      expect((await mapper.map('codex', codex)).problems).toHaveLength(1); // the malformed line, named there
    } finally {
      await mapper.close();
    }
  });

  it('maps here when its thread cannot start or dies', async () => {
    const source = {
      tool: 'claude-code' as const,
      file: claudeV10(path.join(dir, 's2.jsonl'), '/work/p'),
      agentFiles: [],
    };
    const broken = path.join(dir, 'broken.mjs');
    fs.writeFileSync(broken, "throw new Error('no thread today');\n");
    const mapper = new SourceMapper(broken);
    try {
      expect(await mapper.map(source.tool, source)).toEqual(await mapSource(source.tool, source));
      expect(mapper.threaded).toBe(false);
    } finally {
      await mapper.close();
    }
    const none = new SourceMapper(undefined);
    expect(none.threaded).toBe(false);
    expect((await none.map(source.tool, source)).mapped?.events.length).toBeGreaterThan(5);
  });
});
