import type { ErrorCode, IpcResult } from '../../../main/ipc/contract.js';

/** A failed channel call, carrying the contract's error code and a message a person can act on. */
export class KeelCallError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeelCallError';
  }
}

/** Resolves to the value of a successful call; rejects with a KeelCallError otherwise, also when the transport fails. */
export async function call<T>(pending: Promise<IpcResult<T>>): Promise<T> {
  let result: IpcResult<T>;
  try {
    result = await pending;
  } catch {
    throw new KeelCallError('internal', 'Lost the connection to Keel. Reload the window to reconnect.');
  }
  if (result.ok) return result.value;
  throw new KeelCallError(result.error.code, result.error.message);
}

/** A sentence for any error, never a stack trace. */
export function describeError(error: unknown): string {
  if (error instanceof KeelCallError) return error.message;
  if (error instanceof Error && error.message) return error.message;
  return 'Something went wrong.';
}
