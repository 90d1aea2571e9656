import path from 'node:path';
import { utilityProcess } from 'electron';
import { portLauncher, setLocalWorkerLauncher } from '../core/harness/index.js';

/**
 * Issue 34: in the app the local model runs in an Electron utility process (a crashed or out-of-memory model
 * never takes the app down). The worker script is the same one the CLI forks; electron-vite bundles it beside
 * index.js as localModelWorker.js, where it talks through `process.parentPort`. Everything but this
 * `utilityProcess.fork` call (the launcher over a port-speaking child, the worker's parentPort channel) is tested
 * over a Node fork of the same shape (test/main/providers/localPort.test.ts).
 */
export const utilityLauncher = portLauncher((script) =>
  utilityProcess.fork(script, [], { serviceName: 'Keel local model', stdio: 'pipe' }),
);

/** Makes the local provider start its model process as a utility process, with the bundled worker. */
export function useUtilityProcessForLocalModels(mainDir: string): void {
  setLocalWorkerLauncher(utilityLauncher, path.join(mainDir, 'localModelWorker.js'));
}
