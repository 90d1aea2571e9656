import { applyPatchTrajectories } from './applyPatch.js';
import { cliTrajectories } from './cli.js';
import { monorepoTrajectories } from './monorepo.js';
import { nodeCalcTrajectories } from './nodeCalc.js';
import type { Trajectory } from './play.js';
import { pyInventoryTrajectories } from './pyInventory.js';
import { todoTrajectories } from './todo.js';

/** Every trajectory of the suite, in README order. */
export const allTrajectories: Trajectory[] = [
  ...nodeCalcTrajectories,
  ...pyInventoryTrajectories,
  ...monorepoTrajectories,
  ...applyPatchTrajectories,
  ...todoTrajectories,
  ...cliTrajectories,
];
