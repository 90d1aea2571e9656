import { describe, it } from 'vitest';
import { applyPatchTrajectories } from './applyPatch.js';
import { play } from './play.js';

describe('trajectories with apply_patch and parallel reads', () => {
  for (const trajectory of applyPatchTrajectories) {
    it(`${trajectory.id}: ${trajectory.checks}`, async () => {
      await play(trajectory);
    }, 60_000);
  }
});
