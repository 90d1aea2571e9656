// The public surface of main/core/subagents: the runner a turn host plugs in, and the pure pieces it is made of.
export { createSubagentRunner, SUBAGENT_SYSTEM_NOTE, type SubagentRunnerOptions } from './runner.js';
export {
  childPolicy,
  chooseChildTools,
  modeOfTools,
  readSubagentSpec,
  resolveBudget,
  SUBAGENT_METADATA_KEY,
  SubagentBudget,
  SubagentSpec,
  type ChildTools,
} from './spec.js';
export { composeResult, latestAnswer, truncateUtf8, type SubagentEnding } from './result.js';
export { findMirrored, forwardedDecision, mirrorRequest } from './approvals.js';
