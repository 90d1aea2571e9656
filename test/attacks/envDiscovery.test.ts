import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EventOf } from '../../main/common/events.js';
import { createTurnHost } from '../../main/core/harness/turnHost.js';
import { runTurn } from '../../main/core/turn/engine.js';
import { describeEnvGaps, findEnvFiles } from '../../main/sandbox/envFiles.js';
import { createRedactor } from '../../main/sandbox/redact.js';
import { createScriptedSession, useSessionFixture } from '../support/sessionFixture.js';

// Issue #38: redaction learns the project's secrets from its .env files, and the search for them stopped at
// 200 files (sorted by path), so 200 decoy `.env.example` files in folders that sort first (`-000/`) pushed
// the user's own `.env` out and its values leaked. The search has no count window now (real files before
// templates, shallow before deep, bounded by bytes and entries looked at), and what a bound leaves out is
// said: in the redactor's envGaps and as a notice of the turn. Real files in a temp folder, the real walk.
const TOKEN = 'tok9f8e7d6c5b4a39281706qq';
const DEEP = 'Zq8wLp2vRt6Yx4mNdeep';

const fixture = useSessionFixture('keel-attack-env-');

function write(relative: string, text: string): void {
  const file = path.join(fixture.project, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

describe('the .env search cannot be pushed out by decoys', () => {
  it("250 decoy .env.example files ahead of the user's .env: its values are still redacted", () => {
    for (let i = 0; i < 250; i++)
      write(`-${String(i).padStart(3, '0')}/.env.example`, 'SERVICE_TOKEN=your-token-here\n');
    write('.env', `SERVICE_TOKEN=${TOKEN}\n`);
    const redactor = createRedactor({ workspaceRoot: fixture.project, env: {} });
    expect(redactor.redact(`the token is ${TOKEN}`)).toBe('the token is [REDACTED:SERVICE_TOKEN]');
    expect(redactor.envFiles[0]).toBe('.env');
    expect(redactor.envFiles).toHaveLength(251);
    expect(redactor.envGaps).toEqual([]);
  });

  it('a .env deeper than any fixed depth is read (no depth window either)', () => {
    write(`${'nested/'.repeat(12)}.env`, `DEEP_SECRET=${DEEP}\n`);
    const redactor = createRedactor({ workspaceRoot: fixture.project, env: {} });
    expect(redactor.redact(DEEP)).toBe('[REDACTED:DEEP_SECRET]');
  });

  it('decoys that fill the byte budget leave the deeper .env out, and the turn says which', async () => {
    // Nine shallow real-named .env files of 1 MiB of comments fill the 8 MiB budget first.
    const filler = `# ${'x'.repeat(1021)}\n`.repeat(1024);
    for (let i = 0; i < 9; i++) write(`decoy${i}/.env`, filler);
    write('.env', `SERVICE_TOKEN=${TOKEN}\n`);
    write('apps/web/config/.env.local', `DEEP_SECRET=${DEEP}\n`);
    const redactor = createRedactor({ workspaceRoot: fixture.project, env: {} });
    // The root's own .env comes first, whatever the decoys.
    expect(redactor.redact(TOKEN)).toBe('[REDACTED:SERVICE_TOKEN]');
    expect(redactor.envGaps.join('\n')).toMatch(
      /\.env file\(s\) not read, the 8388608-byte budget for \.env files ran out: .*apps\/web\/config\/\.env\.local/,
    );
    // A turn that needs its redactor tells the user, naming the file.
    fs.mkdirSync(fixture.home, { recursive: true });
    const log = createScriptedSession(fixture, { policy: 'full-auto', toolMode: 'write' });
    try {
      fixture.server.enqueue(
        { kind: 'reply', toolCalls: [{ id: 'r1', name: 'read_file', arguments: { path: '.env' } }] },
        { kind: 'reply', text: 'ok' },
      );
      const notices: string[] = [];
      const host = await createTurnHost(log, { hooks: { onNotice: (text) => notices.push(text) } });
      try {
        await runTurn(host, { prompt: 'go' });
      } finally {
        await host.dispose?.();
      }
      const gaps = notices.filter((text) => text.startsWith('Redaction may miss secrets'));
      expect(gaps).toHaveLength(1);
      expect(gaps[0]).toContain('apps/web/config/.env.local');
      const result = log.read().find((e): e is EventOf<'tool_result'> => e.kind === 'tool_result');
      expect(result?.content).toContain('[REDACTED:SERVICE_TOKEN]');
      expect(result?.content).not.toContain(TOKEN);
    } finally {
      log.close();
    }
  });

  it('a search stopped by its entry bound names the folders it did not search', () => {
    write('.env', `SERVICE_TOKEN=${TOKEN}\n`);
    for (let i = 0; i < 30; i++) write(`pkg${String(i).padStart(2, '0')}/src/index.ts`, 'export {};\n');
    write('pkg29/src/deep/.env', `DEEP_SECRET=${DEEP}\n`);
    const found = findEnvFiles(fixture.project, { fileBytes: 1024, totalBytes: 4096, walkEntries: 40 });
    expect(found.files.map((file) => file.path)).toEqual(['.env']);
    expect(found.gaps).toHaveLength(1);
    expect(found.gaps[0]).toMatch(
      /^30 folder\(s\) not searched for \.env files, the search stopped after 40 entries: pkg09, pkg10, .*, and 20 more$/,
    );
    expect(describeEnvGaps(found.gaps)).toMatch(/^Redaction may miss secrets it was not shown: \d+ folder/);
    // A file over the per-file bound is read in part, and that is said too.
    write('.env', `SERVICE_TOKEN=${TOKEN}\n# ${'y'.repeat(2000)}\n`);
    const partial = findEnvFiles(fixture.project, { fileBytes: 1024, totalBytes: 4096, walkEntries: 1000 });
    expect(partial.gaps[0]).toBe(
      '1 .env file(s) read in part (1024 bytes a file, 4096 in all): .env (its first 1024 bytes)',
    );
    expect(partial.files.map((file) => file.path)).toEqual(['.env', 'pkg29/src/deep/.env']);
  });
});
