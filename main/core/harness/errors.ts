import type { ErrorCode } from '../../common/harnessViews.js';

/*
 * The errors hosts tell apart, light to load: the CLI's error mapping (loaded by every keel command) imports
 * this module, not the door's index, so a command loads only what it uses.
 */
export { asDiskFull, DiskFullError } from '../log/logErrors.js';
export {
  DamagedLogError,
  SessionExistsError,
  SessionLockedError,
  SessionNotFoundError,
} from '../log/sessionLog.js';
export { UnknownCompactionError } from '../projection/index.js';
export { HarnessSessionBusyError } from './lock.js';
// A project's setup refused (a bad rule, files changed since they were shown): the person's to correct.
export { RulesError, SetupTrustError } from '../setup/errors.js';

/**
 * A refusal of the harness (no such session, a turn already running, a state an action does not apply to): a
 * code hosts branch on and a sentence a person can act on. The app sends it as `{ ok: false, error }`, the CLI
 * maps the code to an exit code.
 */
export class HarnessError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'HarnessError';
  }
}
