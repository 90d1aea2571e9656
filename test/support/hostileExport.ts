import fs from 'node:fs';
import path from 'node:path';
import type { SessionFixture } from './sessionFixture.js';

/** The time every event of a hand-written export carries. */
export const EXPORT_AT = '2026-01-01T00:00:00.000Z';

let files = 0;

/** An export file of `events` (seq from 1) in the fixture's folder, as someone else could write it. */
export function writeExportFile(
  fixture: Pick<SessionFixture, 'dir'>,
  events: readonly Record<string, unknown>[],
): string {
  const file = path.join(fixture.dir, `export-${++files}.jsonl`);
  const lines = events.map((event, index) => JSON.stringify({ seq: index + 1, at: EXPORT_AT, ...event }));
  fs.writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** A session_created line of someone else's file: their folder, the fixture's scripted endpoint, policy ask. */
export function foreignCreated(
  fixture: Pick<SessionFixture, 'server'>,
  over: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    kind: 'session_created',
    sessionId: 'theirs',
    projectFolder: '/somewhere/else',
    provider: 'openai-compatible',
    model: 'scripted-model',
    baseUrl: fixture.server.openaiBaseUrl,
    contextWindow: 32_000,
    toolMode: 'write',
    policy: 'ask',
    ...over,
  };
}
