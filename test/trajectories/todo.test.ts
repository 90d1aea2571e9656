import { describe, it } from 'vitest';
import { play } from './play.js';
import { todoTrajectories } from './todo.js';

describe('trajectories that keep a plan with the todo tool', () => {
  for (const trajectory of todoTrajectories) {
    it(`${trajectory.id}: ${trajectory.checks}`, async () => {
      await play(trajectory);
    }, 60_000);
  }
});
