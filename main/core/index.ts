/** keel/core: the harness as a library, through the same front door as Keel's own hosts (harness/index.ts). Everything exported here runs under plain Node. */
export * from './harness/index.js';
export * from '../common/events.js';
export type { TraceEntry } from './log/sessionLog.js';
export type { TurnOutcome } from './turn/engine.js';
export type { ProviderKeys, ModelProvider } from '../providers/index.js';
export { LocalHarnessSession } from './harness/harness.js';
export { generateHarness } from './harness/stream.js';
export { PersistentDirError } from './persistent/checkout.js';
export type {
  CommitModel,
  CommittedFile,
  CommitReport,
  PersistentDirSpec,
  UncommittedFile,
} from './persistent/types.js';
export type * from './harness/types.js';
