// The public surface of main/tools: registries by mode, the call executor, and the edit helpers
// the approval gate and resume use.
export {
  createToolRegistry,
  readOnlyTools,
  toToolDefinition,
  writeTools,
  type ToolRegistry,
} from './registry.js';
export {
  describeError,
  executeToolCall,
  formatIssues,
  parseToolCall,
  runParsed,
  type ParsedToolCall,
} from './execute.js';
export { needsApproval } from './approval.js';
export {
  applyEditOnce,
  planChange,
  previewEdit,
  type ExpectedImages,
  type FileChangeArgs,
  type FileChangePlan,
} from './fileChange.js';
export { grepToOutcome, searchWorkspace, type GrepOptions, type GrepResult } from './grep.js';
export { toolLimits } from './limits.js';
export { hashBytes } from './outcome.js';
export type {
  ToolContext,
  ToolDefinition,
  ToolKind,
  ToolMode,
  ToolModule,
  ToolOutcome,
  TextRedactor,
} from './types.js';
export { ToolError } from './types.js';
