import type { ErrorCode } from '../../common/harnessViews.js';
import { ProviderError } from '../../providers/index.js';
import { SettingsError } from '../../store/settings.js';
import { SessionExistsError, SessionLockedError, SessionNotFoundError } from '../log/sessionLog.js';
import { ViewOwnedError } from '../persistent/viewOwner.js';
import { TurnSetupError } from '../turn/engine.js';
import { HarnessError, RulesError, SetupTrustError } from './errors.js';

/** Anything the harness threw as a code and a message: known errors get their code, the rest `internal` (message only, never a stack). */
export function describeError(error: unknown): { code: ErrorCode; message: string } {
  if (error instanceof HarnessError) return { code: error.code, message: error.message };
  if (error instanceof SessionNotFoundError) return { code: 'not_found', message: error.message };
  if (error instanceof SessionLockedError) {
    return {
      code: 'locked',
      message: `${error.message}; wait for it to finish or stop it there (keel stop ${error.sessionId})`,
    };
  }
  // Issue #36: another process mounts the session's copy-on-write views: busy like a held log, said whom to ask.
  if (error instanceof ViewOwnedError) return { code: 'locked', message: error.message };
  if (error instanceof SessionExistsError) return { code: 'invalid_input', message: error.message };
  if (error instanceof SetupTrustError || error instanceof RulesError) {
    return { code: 'invalid_state', message: error.message };
  }
  if (error instanceof SettingsError) return { code: 'invalid_state', message: error.message };
  if (error instanceof TurnSetupError || error instanceof ProviderError) {
    return { code: 'provider', message: error.message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'internal', message: message === '' ? 'unexpected failure' : message };
}
