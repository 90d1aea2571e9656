import { describe, it } from 'vitest';
import { nodeCalcTrajectories } from './nodeCalc.js';
import { play } from './play.js';

describe('trajectories on a Node project with failing tests', () => {
  for (const trajectory of nodeCalcTrajectories) {
    it(`${trajectory.id}: ${trajectory.checks}`, async () => {
      await play(trajectory);
    }, 60_000);
  }
});
