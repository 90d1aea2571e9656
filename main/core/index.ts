/** keel/core: the harness as a library. Everything exported here runs under plain Node. */
export * from '../common/events.js';
export type { TraceEntry } from './log/sessionLog.js';
export type { TurnOutcome } from './turn/engine.js';
export type { ProviderKeys, ModelProvider } from '../providers/index.js';
export { createHarness, LocalHarnessSession } from './sessions/harness.js';
export { streamHarness, generateHarness } from './sessions/stream.js';
export { HarnessSessionBusyError } from './sessions/sessionLock.js';
export { PersistentDirError } from './persistent/checkout.js';
export type {
  CommitModel,
  CommittedFile,
  CommitReport,
  PersistentDirSpec,
  UncommittedFile,
} from './persistent/types.js';
export type * from './sessions/types.js';
