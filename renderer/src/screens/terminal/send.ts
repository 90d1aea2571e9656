import type { IpcResult } from '../../../../main/ipc/contract.js';

/**
 * Sends a call whose answer nothing waits for (an ack, a keystroke, a resize): a refusal or a lost
 * connection is dropped here instead of surfacing as an unhandled rejection. The terminal shows what
 * matters through its pushes (terminal.exit, the run's result).
 */
export function send(pending: Promise<IpcResult<unknown>>): void {
  pending.catch(() => undefined);
}
