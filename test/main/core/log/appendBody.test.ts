import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { NewEvent, SessionEvent } from '../../../../main/common/events.js';
import { bodyText } from '../../../../main/core/log/logRows.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { sessionInit } from './support.js';

/*
 * What an append stores: the body column is the event's fields but seq, at and kind, as JSON, whichever path
 * made it (the exact check's yes keeps the caller's object; zod's copy strips). The append path cuts the body
 * out of one stringify of the whole event (bodyText), so these pin it against the plain "copy without the three,
 * then stringify", and the appended event against the same event read back.
 */

const tempHome = useTempHomes('keel-body-');

function storedRows(log: SessionLog): { seq: number; kind: string; at: string; body: string }[] {
  const db = new Database(path.join(log.dir, 'events.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT seq, kind, at, body FROM events ORDER BY seq').all() as {
      seq: number;
      kind: string;
      at: string;
      body: string;
    }[];
  } finally {
    db.close();
  }
}

const plainBody = (event: SessionEvent): string => {
  const { seq: _seq, at: _at, kind: _kind, ...body } = event;
  return JSON.stringify(body);
};

describe('an append stores the event it returns', () => {
  it('stores each body as its fields without seq, at and kind, and returns the event as it reads back', () => {
    const log = SessionLog.create(tempHome(), sessionInit());
    try {
      const events: NewEvent[] = [
        { kind: 'user_message', content: 'fix "src/server.js", then {run} the tests\n' },
        {
          kind: 'assistant_message',
          content: 'Reading it.',
          toolCalls: [{ id: 'toolu_01', name: 'read_file', arguments: '{"path":"src/server.js"}' }],
          usage: { inputTokens: 1200, outputTokens: 80 },
          stopReason: 'tool_use',
        },
        { kind: 'tool_call_started', toolCallId: 'toolu_01', tool: 'read_file', idempotencyKey: 'k1' },
        {
          kind: 'tool_result',
          toolCallId: 'toolu_01',
          tool: 'read_file',
          content: '"quoted" \\ ☃',
          exitCode: 0,
        },
        // zod's path: a key the schema does not name is stripped, a default filled in (toolCalls).
        { kind: 'assistant_message', content: 'done', notInTheSchema: 1 } as unknown as NewEvent,
        // A caller's own seq and at never win over the log's.
        {
          kind: 'user_message',
          content: 'again',
          seq: 99,
          at: '1999-01-01T00:00:00.000Z',
        } as unknown as NewEvent,
      ];
      const appended: SessionEvent[] = [];
      for (const event of events) {
        const result = log.append(event);
        if (!result.ok) throw new Error('conflict');
        appended.push(...result.events);
      }
      const rows = storedRows(log).slice(1);
      expect(rows.map((row) => row.seq)).toEqual([2, 3, 4, 5, 6, 7]);
      const read = log.read({ fromSeq: 2 });
      for (const [i, event] of appended.entries()) {
        expect(rows[i]?.body).toBe(plainBody(event));
        expect(JSON.parse(rows[i]?.body ?? '')).not.toHaveProperty('seq');
        // Same fields, same key order (seq, at, kind first): the appended event serializes as the read one does.
        expect(JSON.stringify(event)).toBe(JSON.stringify(read[i]));
      }
      expect(appended[4]).toEqual(expect.objectContaining({ content: 'done', toolCalls: [] }));
      expect(appended[4]).not.toHaveProperty('notInTheSchema');
      expect(appended[5]).toEqual(expect.objectContaining({ seq: 7, content: 'again' }));
      expect(appended[5]?.at).not.toBe('1999-01-01T00:00:00.000Z');
    } finally {
      log.close();
    }
  });
});

describe('bodyText', () => {
  const at = '2026-12-02T06:00:00.000Z';
  it('cuts the body out of the event when it starts seq, at, kind', () => {
    const event = { seq: 12, at, kind: 'tool_result', toolCallId: 'c', content: 'x' } as SessionEvent;
    expect(bodyText(event)).toBe('{"toolCallId":"c","content":"x"}');
  });
  it('is the empty object for an event with nothing but those three', () => {
    expect(bodyText({ seq: 3, at, kind: 'user_message' } as unknown as SessionEvent)).toBe('{}');
  });
  it('copies and stringifies an event in any other key order', () => {
    const event = { kind: 'tool_result', toolCallId: 'c', seq: 12, content: 'x', at } as SessionEvent;
    expect(bodyText(event)).toBe('{"toolCallId":"c","content":"x"}');
    // A kind that only starts like another, and an at a field value could be mistaken for.
    const tricky = {
      seq: 1,
      at,
      kind: 'tool_result2',
      content: `"kind":"tool_result"`,
    } as unknown as SessionEvent;
    expect(bodyText(tricky)).toBe(plainBody(tricky));
  });
  it('is the plain body when at or kind holds a character JSON escapes (the head is written unescaped)', () => {
    const shapes = [
      { seq: 2, at: 'a"b', kind: 'tool_result', content: 'x' },
      { seq: 2, at: 'a\\b', kind: 'tool_result', content: 'x' },
      { seq: 2, at, kind: 'tool\nresult', content: 'x' },
      // An at whose raw text reads as the end of the head: JSON escapes its quotes, so it cannot match.
      { seq: 2, at: `${at}","kind":"tool_result`, kind: 'tool_result', content: 'x' },
      { seq: 2, at, kind: 'tool_result","content":"forged', content: 'x' },
    ];
    for (const shape of shapes) {
      const event = shape as unknown as SessionEvent;
      expect(bodyText(event)).toBe(plainBody(event));
    }
  });
});
