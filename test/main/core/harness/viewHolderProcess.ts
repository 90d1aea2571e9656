// Child process for viewConcurrency.test.ts: a second Keel process using a session's copy-on-write views (as the
// app's terminal does while `keel run` holds the session). It mounts them (taking their claim, viewOwner.ts), says
// `holding <pid>` (its holder's), and keeps them until SIGTERM; a refusal is said as `refused: <message>`.
import { mountViews } from '../../../../main/core/persistent/turnCheckouts.js';
import { runningView, stopAllViews } from '../../../../main/core/persistent/viewHolder.js';

const [dataDir, checkout] = process.argv.slice(2) as [string, string];
// Listened for before anything is said: a SIGTERM right after `holding` must let the views go, not kill.
const alive = setInterval(() => undefined, 60_000);
process.once('SIGTERM', () => {
  clearInterval(alive);
  void stopAllViews().then(() => process.exit(0));
});
try {
  await mountViews(dataDir);
  process.stdout.write(`holding ${runningView(dataDir, checkout)?.pid ?? 'none'}\n`);
} catch (error) {
  process.stdout.write(`refused: ${(error as Error).message}\n`);
  process.exit(3);
}
