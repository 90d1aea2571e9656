import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../../../main/common/events.js';
import {
  ProjectionFold,
  projectPayload,
  validatePayload,
  type Payload,
} from '../../../../main/core/projection/index.js';
import { LogBuilder, call } from './eventFactory.js';
import { foldLogs } from './randomLog.js';
import { referenceProjectPayload } from './referenceProjection.js';

const system = 'You are a careful coding agent.';

/** What a log does with its fold: extend it event by event, rebuilding it from the log when it refuses one. */
function extend(fold: ProjectionFold, events: readonly SessionEvent[], upTo: number): ProjectionFold {
  let current = fold;
  for (let i = 0; i < upTo; i++) {
    const event = events[i] as SessionEvent;
    if (event.seq <= current.lastSeq) continue;
    if (!current.apply(event)) current = ProjectionFold.fromEvents(events.slice(0, i + 1));
  }
  return current;
}

/** Through JSON, as a snapshot file stores it. */
function throughJson(fold: ProjectionFold): ProjectionFold {
  return ProjectionFold.fromState(JSON.parse(JSON.stringify(fold.toState())));
}

const bytes = (payload: Payload) => JSON.stringify(payload);

describe('ProjectionFold', () => {
  it('projects exactly what the one-pass projection did, for random logs with rewinds, compactions, reasoning and held-back commits', () => {
    fc.assert(
      fc.property(foldLogs, (events) => {
        const expected = bytes(referenceProjectPayload(events, { system }));
        expect(bytes(ProjectionFold.fromEvents(events).payload({ system }))).toBe(expected);
        expect(bytes(projectPayload(events, { system }))).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('extended event by event from any prefix (also through a JSON snapshot) gives the payload of the whole log', () => {
    fc.assert(
      fc.property(foldLogs, fc.nat(), fc.nat(), (events, splitSeed, snapshotSeed) => {
        const split = events.length === 0 ? 0 : splitSeed % (events.length + 1);
        const snapshotAt =
          split + (events.length - split === 0 ? 0 : snapshotSeed % (events.length - split + 1));
        let fold = ProjectionFold.fromEvents(events.slice(0, split));
        for (let i = split; i < events.length; i++) {
          if (i === snapshotAt) fold = throughJson(fold);
          fold = extend(fold, events, i + 1);
          // After every event: the same bytes as projecting the log so far from scratch.
          const prefix = events.slice(0, i + 1);
          const payload = fold.payload({ system });
          expect(bytes(payload)).toBe(bytes(referenceProjectPayload(prefix, { system })));
          // The incremental check agrees with the whole check, with and without an environment block.
          expect(fold.validate(payload)).toEqual(validatePayload(payload));
          const withEnvironment = { ...payload, environment: ' ' };
          expect(fold.validate(withEnvironment)).toEqual(validatePayload(withEnvironment));
        }
        expect(fold.lastSeq).toBe(events.at(-1)?.seq ?? 0);
      }),
      { numRuns: 200 },
    );
  });

  it('refuses a rewind and a compaction that takes effect, and folds one that does not', () => {
    const log = new LogBuilder();
    log.user('fix the limiter');
    log.assistant('reading', [call('c1')]);
    log.result('c1', 'package limit');
    log.compaction(3, 'read the limiter');
    const fold = ProjectionFold.fromEvents(log.events);
    // The same range again (a re-run): the later one is in effect.
    expect(fold.apply(log.compaction(3, 'read it again'))).toBe(false);
    const refold = ProjectionFold.fromEvents(log.events);
    const older = log.compaction(2, 'an older range');
    expect(refold.apply(older)).toBe(true);
    expect(refold.lastSeq).toBe(older.seq);
    const newer = log.compaction(5, 'newer');
    expect(fold.apply(newer)).toBe(false);
    const rewound = log.add({ kind: 'rewound', toSeq: 1 });
    expect(fold.apply(rewound)).toBe(false);
    expect(fold.lastSeq).toBe(4);
  });

  it('a result that arrives after its call fills the cancelled slot in place; earlier payloads keep what they had', () => {
    const log = new LogBuilder();
    log.user('look');
    log.assistant('', [call('c1'), call('c2')]);
    const fold = ProjectionFold.fromEvents(log.events);
    const before = fold.payload({ system });
    expect(fold.apply(log.result('c2', 'second'))).toBe(true);
    const after = fold.payload({ system });
    expect(before.messages.map((m) => m.content)).toEqual([
      system,
      'look',
      '',
      '{"error":"cancelled_by_user"}',
      '{"error":"cancelled_by_user"}',
    ]);
    expect(after.messages.at(-1)).toEqual({ role: 'tool', content: 'second', toolCallId: 'c2' });
    expect(Object.isFrozen(after.messages[1])).toBe(true);
  });

  it("each payload's images are its own: bytes the turn attaches to one never reach the fold or the next payload", () => {
    const log = new LogBuilder();
    log.user('screenshot it');
    log.assistant('', [call('c1')]);
    const fold = ProjectionFold.fromEvents(log.events);
    const image = { handle: 'mcp/shot.png', mimeType: 'image/png' as const, bytes: 3 };
    fold.apply(log.add({ kind: 'tool_result', toolCallId: 'c1', content: 'shot', images: [image] }));
    const first = fold.payload({ system });
    const shown = first.messages.at(-1)?.images?.[0];
    expect(shown).toEqual({ handle: 'mcp/shot.png', mimeType: 'image/png' });
    if (shown) shown.data = 'iVBORw0KGgo=';
    expect(fold.payload({ system }).messages.at(-1)?.images).toEqual([
      { handle: 'mcp/shot.png', mimeType: 'image/png' },
    ]);
    expect(fold.validate(first)).toEqual({ ok: true });
  });

  it('rejects a stored state of another version or shape', () => {
    const state = ProjectionFold.fromEvents(new LogBuilder().events).toState();
    expect(() => ProjectionFold.fromState({ ...state, version: 0 })).toThrow(/version/);
    expect(() => ProjectionFold.fromState({ ...state, body: [{ role: 'robot', content: 'x' }] })).toThrow();
    expect(() => ProjectionFold.fromState({ ...state, open: [['c1', 2, [7]]] })).toThrow();
    expect(() => ProjectionFold.fromState('{')).toThrow();
  });
});
