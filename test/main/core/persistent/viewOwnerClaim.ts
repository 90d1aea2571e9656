// Child process for viewOwner.test.ts: takes the claim on the views of the `checkouts` folder named on the command
// line (or says why not), says so, and keeps it until SIGTERM (then gives it up) or until killed (a dead owner).
import { claimViews, releaseViews } from '../../../../main/core/persistent/viewOwner.js';

const [checkoutsDir] = process.argv.slice(2) as [string];
// Listened for before anything is said: a SIGTERM right after `claimed` must give the claim up, not kill.
const alive = setInterval(() => undefined, 60_000);
process.once('SIGTERM', () => {
  clearInterval(alive);
  releaseViews(checkoutsDir);
  process.exit(0);
});
try {
  claimViews(checkoutsDir);
  process.stdout.write('claimed\n');
} catch (error) {
  process.stdout.write(`refused: ${(error as Error).message}\n`);
  process.exit(3);
}
