import type { z } from 'zod';
import { SessionExistsError, SessionLockedError, SessionNotFoundError } from '../core/log/sessionLog.js';
import { TurnSetupError } from '../core/turn/engine.js';
import { ProviderError, SettingsError } from '../core/host.js';
import type { ErrorCode, IpcError } from './contract.js';

/** A handler's deliberate failure: crosses the bridge as `{ ok: false, error: { code, message } }`. */
export class IpcFailure extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'IpcFailure';
  }
}

/** Maps anything a handler threw to the contract's error: known harness errors get their code, the rest `internal` (message only, never a stack). */
export function toIpcError(error: unknown): IpcError {
  if (error instanceof IpcFailure) return { code: error.code, message: error.message };
  if (error instanceof SessionNotFoundError) return { code: 'not_found', message: error.message };
  if (error instanceof SessionLockedError) {
    return {
      code: 'locked',
      message: `${error.message}; wait for it to finish or stop it there (keel stop ${error.sessionId})`,
    };
  }
  if (error instanceof SessionExistsError) return { code: 'invalid_input', message: error.message };
  if (error instanceof SettingsError) return { code: 'invalid_state', message: error.message };
  if (error instanceof TurnSetupError || error instanceof ProviderError) {
    return { code: 'provider', message: error.message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal', message: message === '' ? 'unexpected failure' : message };
}

/** The first problem of a failed parse, as `field: what is wrong`. */
export function describeInvalidInput(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid input';
  const where = issue.path.length > 0 ? issue.path.join('.') : 'input';
  return `${where}: ${issue.message}`;
}
