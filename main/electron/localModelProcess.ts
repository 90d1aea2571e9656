import path from 'node:path';
import { utilityProcess } from 'electron';
import { setLocalWorkerLauncher, type WorkerLauncher } from '../core/harness/index.js';

/**
 * Issue 34: in the app the local model runs in an Electron utility process (a crashed or out-of-memory model
 * never takes the app down). The worker script is the same one the CLI forks; electron-vite bundles it beside
 * index.js as localModelWorker.js, where it talks through `process.parentPort`.
 */
export const utilityLauncher: WorkerLauncher = (script) => {
  const child = utilityProcess.fork(script, [], { serviceName: 'Keel local model', stdio: 'pipe' });
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-2000);
  });
  return {
    get pid() {
      return child.pid;
    },
    send: (message) => child.postMessage(message),
    onMessage: (handler) => child.on('message', handler),
    onExit: (handler) =>
      child.once('exit', (code) => {
        const last = tail.trim().split('\n').slice(-3).join(' | ');
        handler(`exit code ${code}${last ? `: ${last}` : ''}`);
      }),
    kill: () => {
      child.kill();
    },
  };
};

/** Makes the local provider start its model process as a utility process, with the bundled worker. */
export function useUtilityProcessForLocalModels(mainDir: string): void {
  setLocalWorkerLauncher(utilityLauncher, path.join(mainDir, 'localModelWorker.js'));
}
