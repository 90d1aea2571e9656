import { describe, it } from 'vitest';
import { monorepoTrajectories } from './monorepo.js';
import { play } from './play.js';

describe('trajectories on an npm workspace with nested AGENTS.md', () => {
  for (const trajectory of monorepoTrajectories) {
    it(`${trajectory.id}: ${trajectory.checks}`, async () => {
      await play(trajectory);
    }, 60_000);
  }
});
