import fs, { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import {
  InvalidExportError,
  exportLines,
  exportSession,
  importSession,
  parseExport,
  serializeEvent,
} from '../../../../main/core/harness/transfer.js';

const fixture = readFileSync(
  path.join(import.meta.dirname, '../../../fixtures/harness-article-session.jsonl'),
  'utf8',
);
const fixtureLines = fixture.trimEnd().split('\n');

/** The fixture with line `n` (1-based) replaced. */
function withLine(n: number, text: string): string {
  return fixtureLines.map((line, i) => (i === n - 1 ? text : line)).join('\n') + '\n';
}

/** The fixture's line `n` as an object, changed by `edit`, as JSON text. */
function editLine(n: number, edit: (event: Record<string, unknown>) => void): string {
  const event = JSON.parse(fixtureLines[n - 1] ?? '') as Record<string, unknown>;
  edit(event);
  return JSON.stringify(event);
}

function problemsOf(text: string): string[] {
  const result = parseExport(text);
  expect(result.ok).toBe(false);
  return result.ok ? [] : result.problems.map((p) => `line ${p.line}: ${p.message}`);
}

describe('export format', () => {
  it('accepts the article example and serializes it back to the same bytes', () => {
    const result = parseExport(fixture);
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    expect(result.events).toHaveLength(10);
    expect(result.events.map((e) => serializeEvent(e) + '\n').join('')).toBe(fixture);
  });

  it('writes seq, kind and at first, then the schema order, whatever order the fields came in', () => {
    const event = {
      toolCalls: [{ arguments: '{}', name: 'grep', id: 'c1' }],
      content: 'hi',
      at: '2025-01-01T00:00:00.000Z',
      kind: 'assistant_message',
      seq: 3,
    } as SessionEvent;
    expect(serializeEvent(event)).toBe(
      '{"seq":3,"kind":"assistant_message","at":"2025-01-01T00:00:00.000Z","content":"hi","toolCalls":[{"id":"c1","name":"grep","arguments":"{}"}]}',
    );
  });

  it('pages through the log when exporting', () => {
    const parsed = parseExport(fixture);
    if (!parsed.ok) throw new Error('fixture invalid');
    const calls: number[] = [];
    const lines = [
      ...exportLines((fromSeq, limit) => {
        calls.push(fromSeq);
        return parsed.events.filter((e) => e.seq >= fromSeq).slice(0, limit);
      }, 4),
    ];
    expect(lines.join('')).toBe(fixture);
    expect(calls).toEqual([1, 5, 9]);
  });

  it('accepts CRLF line ends, a BOM and blank lines', () => {
    const text = '\uFEFF' + fixtureLines.join('\r\n\r\n') + '\r\n';
    expect(parseExport(text).ok).toBe(true);
  });
});

describe('import validation', () => {
  it('names the line and the JSON syntax error', () => {
    const [problem] = problemsOf(withLine(3, '{"seq":3,"kind":"assistant_message",'));
    expect(problem).toMatch(/^line 3: invalid JSON \(.+\)$/);
  });

  it('suggests the kind a misspelled kind was meant to be', () => {
    const text = withLine(
      4,
      editLine(4, (e) => (e.kind = 'assistent_message')),
    );
    expect(problemsOf(text)).toEqual([
      'line 4: kind "assistent_message" is not an event kind (did you mean assistant_message?)',
    ]);
  });

  it('lists the kinds when nothing is close', () => {
    const [problem] = problemsOf(
      withLine(
        2,
        editLine(2, (e) => (e.kind = 'banana')),
      ),
    );
    expect(problem).toContain('line 2: kind "banana" is not an event kind (the kinds are: session_created, ');
  });

  it('rejects a tool result whose call no earlier assistant message made', () => {
    const text = withLine(
      4,
      editLine(4, (e) => (e.toolCallId = 'c9')),
    );
    expect(problemsOf(text)).toEqual([
      'line 4: tool_result refers to tool call "c9" which no earlier assistant_message made',
    ]);
  });

  it('rejects a result that comes before its call', () => {
    const lines = [...fixtureLines];
    // Swap the grep call (seq 3) and its result (seq 4), renumbering so seq stays dense.
    const call = JSON.parse(lines[2] ?? '') as Record<string, unknown>;
    const result = JSON.parse(lines[3] ?? '') as Record<string, unknown>;
    lines[2] = JSON.stringify({ ...result, seq: 3 });
    lines[3] = JSON.stringify({ ...call, seq: 4 });
    expect(problemsOf(lines.join('\n'))).toEqual([
      'line 3: tool_result refers to tool call "call_grep" which no earlier assistant_message made',
    ]);
  });

  it('rejects a second result for the same call', () => {
    const duplicate = editLine(4, (e) => (e.seq = 11));
    expect(problemsOf(fixture + duplicate + '\n')).toEqual([
      'line 11: tool call "call_grep" already has a result at line 4 (a call gets one result)',
    ]);
  });

  it('rejects an approval decision that does not point at an earlier approval request', () => {
    expect(
      problemsOf(
        withLine(
          7,
          editLine(7, (e) => (e.requestSeq = 5)),
        ),
      ),
    ).toEqual([
      'line 7: approval_granted refers to requestSeq 5, which is a assistant_message, not an approval_request',
    ]);
    expect(
      problemsOf(
        withLine(
          7,
          editLine(7, (e) => (e.requestSeq = 9)),
        ),
      ),
    ).toEqual(['line 7: approval_granted refers to requestSeq 9, which is not an earlier event']);
  });

  it('rejects a second decision on the same approval request', () => {
    const deny = JSON.stringify({
      seq: 11,
      kind: 'approval_denied',
      at: '2025-03-04T09:03:00.000Z',
      requestSeq: 6,
    });
    expect(problemsOf(fixture + deny + '\n')).toEqual([
      'line 11: approval request 6 was already decided at line 7 (approval_granted)',
    ]);
  });

  it('rejects an approval request for a call nobody made', () => {
    expect(
      problemsOf(
        withLine(
          6,
          editLine(6, (e) => (e.toolCallId = 'nope')),
        ),
      ),
    ).toEqual([
      'line 6: approval_request refers to tool call "nope" which no earlier assistant_message made',
    ]);
  });

  it('rejects a compaction that replaces itself or later events', () => {
    expect(
      problemsOf(
        withLine(
          9,
          editLine(9, (e) => (e.through = 9)),
        ),
      ),
    ).toEqual(['line 9: compaction at seq 9 replaces through 9; it can only replace earlier events']);
  });

  it('requires seq to count up from 1 without gaps', () => {
    expect(
      problemsOf(
        withLine(
          5,
          editLine(5, (e) => (e.seq = 6)),
        ),
      ),
    ).toContain(
      'line 5: seq is 6 but 5 was expected (seq counts up from 1 with no gaps, one event per line)',
    );
    // One missing line is one problem, not one per following line.
    const gap = fixtureLines.filter((_, i) => i !== 6).join('\n');
    expect(problemsOf(gap)).toEqual([
      'line 7: seq is 8 but 7 was expected (seq counts up from 1 with no gaps, one event per line)',
    ]);
  });

  it('requires session_created first and only first', () => {
    expect(problemsOf(fixtureLines.slice(1).join('\n'))).toEqual([
      'line 1: seq is 2 but 1 was expected (seq counts up from 1 with no gaps, one event per line)',
      'line 1: the first event must be session_created, found user_message',
    ]);
    const renumbered = fixtureLines
      .slice(1)
      .map((line, i) => JSON.stringify({ ...(JSON.parse(line) as object), seq: i + 1 }));
    const problems = problemsOf(renumbered.join('\n'));
    expect(problems[0]).toBe('line 1: the first event must be session_created, found user_message');
    const twice = fixture + editLine(1, (e) => (e.seq = 11)) + '\n';
    expect(problemsOf(twice)).toEqual(['line 11: session_created may only be the first event']);
  });

  it('reports a missing field, a wrong type and an unknown field with the field named', () => {
    expect(
      problemsOf(
        withLine(
          2,
          editLine(2, (e) => delete e.content),
        ),
      ),
    ).toEqual(['line 2: user_message: missing field "content" (string)']);
    expect(
      problemsOf(
        withLine(
          3,
          editLine(3, (e) => ((e.toolCalls as { id: unknown }[])[0]!.id = 7)),
        ),
      ),
    ).toEqual(['line 3: assistant_message: field "toolCalls[0].id": expected string, received number']);
    const snake = editLine(3, (e) => {
      e.tool_calls = e.toolCalls;
      delete e.toolCalls;
    });
    expect(problemsOf(withLine(3, snake))[0]).toBe(
      'line 3: assistant_message: unknown field "tool_calls" (did you mean toolCalls?)',
    );
    expect(
      problemsOf(
        withLine(
          7,
          editLine(7, (e) => (e.scope = 'forever')),
        ),
      ),
    ).toEqual([
      'line 7: approval_granted: field "scope" must be once, session, path:<glob> or prefix:<command prefix>',
    ]);
  });

  it('reports lines that are not objects or have no kind', () => {
    expect(problemsOf(withLine(2, '[1,2]'))).toEqual([
      'line 2: expected a JSON object (one event per line), found an array',
    ]);
    expect(problemsOf(withLine(2, '{"seq":2,"at":"x","content":"hi"}'))).toEqual([
      'line 2: missing "kind" (every event names its kind, e.g. "kind":"user_message")',
    ]);
  });

  it('reports every bad line at once, in line order', () => {
    const text = fixtureLines
      .map((line, i) => (i === 2 ? '{oops' : i === 7 ? editLine(8, (e) => (e.kind = 'tool_reslt')) : line))
      .join('\n');
    const problems = problemsOf(text);
    expect(problems.map((p) => p.split(':')[0])).toEqual(['line 3', 'line 8']);
  });

  it('rejects an empty file', () => {
    expect(problemsOf('\n\n')).toEqual([
      'line 1: the file has no events (an export starts with a session_created line)',
    ]);
  });
});

describe('importSession / exportSession', () => {
  it('carries instructions_loaded through export and import byte for byte', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-transfer-'));
    try {
      const loaded = JSON.stringify({
        seq: 11,
        kind: 'instructions_loaded',
        at: '2025-01-01T00:10:00.000Z',
        files: [
          { path: 'AGENTS.md', sha256: 'ab12', size: 40, content: 'Run `npm test` before you finish.' },
          { path: 'pkg/api/CLAUDE.md', sha256: 'cd34', size: 90_000, content: 'Tabs.', truncated: true },
        ],
      });
      const text = `${fixture}${loaded}\n`;
      const { id, events } = importSession(home, text);
      expect(events).toBe(11);
      let exported = '';
      exportSession(home, id, (chunk) => (exported += chunk));
      expect(exported.split('\n').slice(1).join('\n')).toBe(text.split('\n').slice(1).join('\n'));
      expect(problemsOf(`${fixture}${loaded.replace('"size":40', '"size":-1')}\n`)).toEqual([
        expect.stringMatching(/^line 11: .*size/),
      ]);
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });

  it('refuses to keep an id that cannot be a folder name, and writes nothing', () => {
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-transfer-'));
    try {
      const text = withLine(
        1,
        editLine(1, (e) => (e.sessionId = '../../escape')),
      );
      expect(() => importSession(home, text, { keepId: true })).toThrow(InvalidExportError);
      expect(fs.existsSync(path.join(home, 'sessions'))).toBe(false);
      expect(fs.existsSync(path.join(home, 'escape'))).toBe(false);

      // Without --keep-id the same file imports under a fresh id.
      const { id, events } = importSession(home, text);
      expect(events).toBe(10);
      let exported = '';
      expect(exportSession(home, id, (chunk) => (exported += chunk))).toBe(10);
      expect(exported.split('\n').slice(1).join('\n')).toBe(fixture.split('\n').slice(1).join('\n'));
    } finally {
      fs.rmSync(home, { recursive: true, force: true });
    }
  });
});
