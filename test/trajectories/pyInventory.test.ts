import { describe, it } from 'vitest';
import { pyInventoryTrajectories } from './pyInventory.js';
import { play } from './play.js';

describe('trajectories on a Python project (python3 -m unittest)', () => {
  for (const trajectory of pyInventoryTrajectories) {
    it(`${trajectory.id}: ${trajectory.checks}`, async () => {
      await play(trajectory);
    }, 60_000);
  }
});
