import type { WorkerLauncher } from './host.js';

/**
 * A child process that talks through a message port, as Electron's `UtilityProcess` does: `postMessage` to it,
 * `message` events with the message itself, one `exit` event with the exit code (no signal), piped stderr. The app
 * passes `utilityProcess.fork`; a test passes a Node `fork` wrapped to the same shape, so everything but Electron's
 * own call runs in the test suite.
 */
export type PortChild = {
  readonly pid: number | undefined;
  readonly stderr: NodeJS.ReadableStream | null;
  postMessage(message: unknown): void;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  once(event: 'exit', listener: (code: number) => void): unknown;
  kill(): boolean;
};

/**
 * A launcher over a port-speaking child (the worker reads `process.parentPort` there): its stderr's tail explains a
 * crash, as `forkLauncher`'s does. `pid` is read when asked: a utility process has none until it has spawned.
 */
export function portLauncher(forkChild: (script: string) => PortChild): WorkerLauncher {
  return (script) => {
    const child = forkChild(script);
    let tail = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-2000);
    });
    return {
      get pid() {
        return child.pid;
      },
      send: (message) => child.postMessage(message),
      onMessage: (handler) => {
        child.on('message', handler);
      },
      onExit: (handler) => {
        child.once('exit', (code) => {
          const last = tail.trim().split('\n').slice(-3).join(' | ');
          handler(`exit code ${code}${last ? `: ${last}` : ''}`);
        });
      },
      kill: () => {
        child.kill();
      },
    };
  };
}
