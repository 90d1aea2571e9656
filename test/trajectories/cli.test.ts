import { beforeAll, describe, it } from 'vitest';
import { ensureCliBuilt } from '../support/cli.js';
import { cliTrajectories } from './cli.js';
import { play } from './play.js';

beforeAll(async () => {
  await ensureCliBuilt();
}, 180_000);

describe('trajectories through the built keel CLI', () => {
  for (const trajectory of cliTrajectories) {
    it(`${trajectory.id}: ${trajectory.checks}`, async () => {
      await play(trajectory);
    }, 90_000);
  }
});
