import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ensureCliBuilt, makeTempDir, removeTempDir, runKeel } from '../../support/cli.js';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/harness-article-session.jsonl');
const fixture = fs.readFileSync(FIXTURE, 'utf8');
const fixtureLines = fixture.trimEnd().split('\n');
const FIXTURE_ID = '01JNARTICLE0000000000000001';

let home: string;
beforeAll(ensureCliBuilt, 180_000);
beforeEach(() => {
  home = makeTempDir();
});
afterEach(() => removeTempDir(home));

/** Folders under <home>/sessions (none when the folder does not exist). */
function sessionFolders(): string[] {
  const dir = path.join(home, 'sessions');
  return fs.existsSync(dir) ? fs.readdirSync(dir) : [];
}

describe('keel import / keel export', () => {
  it('round-trips the article session byte for byte with --keep-id', () => {
    const imported = runKeel(home, ['import', FIXTURE, '--keep-id']);
    expect(imported).toEqual({ code: 0, stdout: `${FIXTURE_ID}\n`, stderr: '' });

    const exported = runKeel(home, ['export', FIXTURE_ID]);
    expect(exported.code).toBe(0);
    expect(exported.stdout).toBe(fixture);

    const file = path.join(home, 'out.jsonl');
    expect(runKeel(home, ['export', FIXTURE_ID, '-o', file]).code).toBe(0);
    expect(fs.readFileSync(file, 'utf8')).toBe(fixture);
  });

  it('mints a new id without --keep-id and rewrites session_created to it', () => {
    const imported = runKeel(home, ['import', FIXTURE]);
    expect(imported.code).toBe(0);
    const id = imported.stdout.trim();
    expect(id).toMatch(/^[0-9a-z]{26}$/);
    expect(id).not.toBe(FIXTURE_ID);

    const lines = runKeel(home, ['export', id]).stdout.trimEnd().split('\n');
    expect((JSON.parse(lines[0] ?? '') as { sessionId: string }).sessionId).toBe(id);
    expect(lines[0]).toBe(fixtureLines[0]?.replace(FIXTURE_ID, id));
    expect(lines.slice(1)).toEqual(fixtureLines.slice(1));
  });

  it('reads the export from standard input with -', () => {
    const imported = runKeel(home, ['import', '-', '--keep-id'], { input: fixture });
    expect(imported.stdout).toBe(`${FIXTURE_ID}\n`);
    expect(runKeel(home, ['export', FIXTURE_ID]).stdout).toBe(fixture);
  });

  it('refuses to import over an existing session with --keep-id and leaves it intact', () => {
    expect(runKeel(home, ['import', FIXTURE, '--keep-id']).code).toBe(0);
    const again = runKeel(home, ['import', FIXTURE, '--keep-id']);
    expect(again.code).toBe(2);
    expect(again.stderr).toBe(
      `keel: session ${FIXTURE_ID} already exists in this home; import without --keep-id to get a new id\n`,
    );
    expect(runKeel(home, ['export', FIXTURE_ID]).stdout).toBe(fixture);
    expect(sessionFolders()).toEqual([FIXTURE_ID]);
  });

  it('writes nothing when one line in the middle is bad, and names that line', () => {
    const bad = fixtureLines.map((line, i) => (i === 5 ? line.replace('"call_edit"', '"c9"') : line));
    const file = path.join(home, 'bad.jsonl');
    fs.writeFileSync(file, bad.join('\n') + '\n');

    const result = runKeel(home, ['import', file, '--keep-id']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      `keel: cannot import ${file}, nothing was written: line 6: approval_request refers to tool call "c9" which no earlier assistant_message made\n`,
    );
    expect(sessionFolders()).toEqual([]);
    expect(JSON.parse(runKeel(home, ['sessions', '--json']).stdout)).toEqual([]);
  });

  it('lists every problem, one per line, when several lines are bad', () => {
    const bad = fixtureLines.map((line, i) =>
      i === 2 ? line.slice(0, 40) : i === 6 ? line.replace('approval_granted', 'approval_grantd') : line,
    );
    const file = path.join(home, 'bad.jsonl');
    fs.writeFileSync(file, bad.join('\n'));

    const result = runKeel(home, ['import', file]);
    expect(result.code).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`keel: cannot import ${file}, nothing was written (2 problems):`);
    expect(lines[1]).toMatch(/^ {2}line 3: invalid JSON \(.+\)$/);
    expect(lines[2]).toBe(
      '  line 7: kind "approval_grantd" is not an event kind (did you mean approval_granted?)',
    );
    expect(sessionFolders()).toEqual([]);
  });

  it('shows each event on one line with its seq, kind and a summary', () => {
    runKeel(home, ['import', FIXTURE, '--keep-id']);
    const shown = runKeel(home, ['show', FIXTURE_ID]);
    expect(shown.code).toBe(0);
    const lines = shown.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(10);
    expect(lines[2]).toMatch(/^ 3 {2}assistant_message +"Let me find where .*→ grep\(.*\) call_grep$/);
    expect(lines[6]).toBe(' 7  approval_granted   request 6, scope session');
    expect(lines[8]).toMatch(/^ 9 {2}compaction +replaces 1\.\.6 "Goal: add rate limiting/);

    const json = runKeel(home, ['show', FIXTURE_ID, '--json']);
    // The stored events are the file's, session_created carrying the import mark (export leaves it out).
    const [created, ...rest] = fixtureLines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(JSON.parse(json.stdout)).toEqual([
      {
        ...created,
        metadata: { imported: { at: expect.any(String) as unknown, through: 10, projectChosen: false } },
      },
      ...rest,
    ]);
  });

  it('leaves no partial file when exporting an unknown session to a file', () => {
    const file = path.join(home, 'out.jsonl');
    const result = runKeel(home, ['export', 'nope', '-o', file]);
    expect(result.code).toBe(2);
    expect(fs.readdirSync(home).filter((name) => name.includes('out.jsonl'))).toEqual([]);
  });
});
