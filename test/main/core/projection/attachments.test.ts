import { describe, expect, it } from 'vitest';
import { SessionEvent, type EventOf } from '../../../../main/common/events.js';
import type { UserAttachment } from '../../../../main/common/attachments.js';
import { renderEvent } from '../../../../main/core/compaction/summarize.js';
import { ProjectionFold, projectPayload, validatePayload } from '../../../../main/core/projection/index.js';
import { LogBuilder } from './eventFactory.js';

// A prompt's files in the projection (issue #32): carried by handle while their turn is in the kept part,
// named (never re-sent) once a compaction swallowed it; old logs without the field still read.

const system = 'You are Keel.';
const image: UserAttachment = {
  handle: 'attachments/abc.png',
  mimeType: 'image/png',
  bytes: 128,
  name: 'shot.png',
  width: 16,
  height: 8,
};

function withFile(log: LogBuilder, content: string): EventOf<'user_message'> {
  return log.add({ kind: 'user_message', content, attachments: [image] }) as EventOf<'user_message'>;
}

describe('user attachments in the projection', () => {
  it('carries the handle and type on the user message while it is in the kept turns', () => {
    const log = new LogBuilder();
    withFile(log, 'what is wrong?');
    const payload = projectPayload(log.events, { system });
    expect(validatePayload(payload)).toEqual({ ok: true });
    expect(payload.messages[1]).toEqual({
      role: 'user',
      content: 'what is wrong?',
      attachments: [{ handle: 'attachments/abc.png', mimeType: 'image/png', name: 'shot.png' }],
    });
  });

  it('gives every payload its own copy of the attachments (the turn writes bytes into them)', () => {
    const log = new LogBuilder();
    withFile(log, 'look');
    const fold = ProjectionFold.fromEvents(log.events);
    const first = fold.payload({ system });
    (first.messages[1]?.attachments ?? [])[0]!.data = 'AAAA';
    expect(fold.payload({ system }).messages[1]?.attachments?.[0]?.data).toBeUndefined();
    expect(fold.validate(first)).toEqual({ ok: true });
  });

  it('names the files of a pinned goal the summary swallowed, without re-sending them', () => {
    const log = new LogBuilder();
    withFile(log, 'fix the page in this screenshot');
    log.assistant('looking');
    log.user('and the footer');
    log.compaction(3, 'the user sent a screenshot attachments/abc.png');
    log.assistant('done');
    const payload = projectPayload(log.events, { system });
    expect(payload.messages.some((message) => message.attachments !== undefined)).toBe(false);
    expect(payload.messages[2]).toEqual({
      role: 'user',
      content:
        'fix the page in this screenshot\n[attached earlier, not re-sent: attachments/abc.png (image/png, shot.png)]',
    });
  });

  it('keeps sending a file whose turn is after the compaction', () => {
    const log = new LogBuilder();
    log.user('goal');
    log.assistant('ok');
    log.compaction(2, 'goal set');
    withFile(log, 'now this');
    const payload = projectPayload(log.events, { system });
    expect(payload.messages.at(-1)?.attachments).toHaveLength(1);
  });

  it('renders the handle into the transcript a summary is made from', () => {
    const log = new LogBuilder();
    const event = withFile(log, 'see');
    expect(renderEvent(event, 1000)).toBe(
      '#1 user: see\n[attached: attachments/abc.png (image/png, shot.png)]',
    );
  });

  it('reads a user_message written before the field existed', () => {
    const old = SessionEvent.parse({ seq: 1, at: 'x', kind: 'user_message', content: 'hi' });
    expect(old).toEqual({ seq: 1, at: 'x', kind: 'user_message', content: 'hi' });
  });
});
