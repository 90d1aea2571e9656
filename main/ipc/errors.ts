import type { z } from 'zod';
import { describeError, HarnessError } from '../core/harness/index.js';
import type { ErrorCode, IpcError } from './contract.js';

/** A handler's deliberate failure: crosses the bridge as `{ ok: false, error: { code, message } }`. */
export class IpcFailure extends HarnessError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = 'IpcFailure';
  }
}

/** Maps anything a handler threw to the contract's error: the harness's refusals keep their code (core/harness/errors.ts), the rest is `internal`. */
export function toIpcError(error: unknown): IpcError {
  return describeError(error);
}

/** The first problem of a failed parse, as `field: what is wrong`. */
export function describeInvalidInput(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid input';
  const where = issue.path.length > 0 ? issue.path.join('.') : 'input';
  return `${where}: ${issue.message}`;
}
