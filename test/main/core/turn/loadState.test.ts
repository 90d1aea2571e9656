import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../../../../main/common/events.js';
import { SessionLog } from '../../../../main/core/log/sessionLog.js';
import { visibleEvents } from '../../../../main/core/projection/rewind.js';
import { loadSessionState } from '../../../../main/core/turn/loadState.js';
import { foldSession } from '../../../../main/core/turn/state.js';
import { useTempHomes } from '../../store/support/tempHomes.js';
import { buildLog, foldStep } from '../projection/randomLog.js';

const tempHome = useTempHomes('keel-load-state-');

const created: NewEvent = {
  kind: 'session_created',
  sessionId: 'x',
  projectFolder: '/work/app',
  provider: 'openai-compatible',
  model: 'qwen',
  contextWindow: 32_000,
  toolMode: 'write',
  policy: 'ask',
};

describe('loadSessionState', () => {
  it('agrees with folding every event in effect, for random logs with rewinds (without reading the whole log)', () => {
    fc.assert(
      fc.property(fc.array(foldStep, { minLength: 1, maxLength: 80 }), (steps) => {
        const home = tempHome();
        const id = SessionLog.importEvents(home, buildLog(steps, created));
        const log = SessionLog.open(home, id);
        try {
          const events = log.read();
          const whole = foldSession(visibleEvents(events));
          // Turn count and usage count every event, set aside or not (what the log's tallies sum).
          whole.turns = log.countOfKind('user_message');
          whole.totals = log.usageTotals();
          expect(loadSessionState(log)).toEqual(whole);
        } finally {
          log.close();
        }
      }),
      { numRuns: 60 },
    );
  });
});
