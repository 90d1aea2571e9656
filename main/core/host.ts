/*
 * What the hosts (the app's handlers and keel serve in main/ipc, the CLI, the Electron shell) take from below
 * the core, declared in one place: the home and its settings, the session index, providers' keys and errors,
 * the machine's sandbox and path confinement. Hosts import these from here, never from store, providers or
 * sandbox directly (eslint.config.js LAYERS), so what a host may touch below the harness is this list.
 */
export { resolveHome, sweepDeadScratch } from './hostStart.js';
export { readSettings, writeSettings, SettingsError, type Settings } from '../store/settings.js';
export { SessionIndex, isLeaseStale, type SessionSummary } from '../store/sessionIndex.js';
export { createProvider, toProviderError, ProviderError, type ProviderKeys } from '../providers/index.js';
export { effectiveEffort, reasoningChoices } from '../providers/reasoning.js';
export { detectSandbox, type SandboxInfo } from '../sandbox/box.js';
export type { Redactor } from '../sandbox/redact.js';
export { resolveInWorkspace } from '../sandbox/paths.js';
// The command runner's flow control and running commands (output pushed to a window, Stop/Kill), and the
// interactive terminal a window opens in a session's box.
export { createFlowControl, type FlowControl } from '../runner/flow.js';
export { runningCommand, type RunningCommand } from '../runner/boxedCommand.js';
// sweepDeadScratch (above, hostStart.ts): what killed Keels left in the temp folder (scratch folders, and the
// processes of their runs still alive: a bwrap child caught in its setup), ended when a host starts.
// keel eval runs each task's check command in the box, as a tool call would.
export { runCommand, type RunCommandResult } from '../runner/boxedCommand.js';
export { runGit } from './persistent/git.js';
// The tools' own descriptions the approval panel and the command view show.
export { planChange, previewEdit, type FileChangeArgs } from '../tools/fileChange.js';
export { planPatch, type PatchFilePlan } from '../tools/patchPlan.js';
export { applyPatchParameters } from '../tools/applyPatch.js';
export { toolLimits } from '../tools/limits.js';
export { looksBinary } from '../tools/outcome.js';
export { createToolRegistry } from '../tools/registry.js';
export type { ToolArea, ToolContext } from '../tools/types.js';
export { readOnlyPathsFor, artifactNameFor, extraWritablePaths } from '../tools/runCommandTool.js';
// Where a tool's path argument lands and how a real path is shown (the approval panel's command folder).
export { resolvePath as resolveToolPath } from '../tools/confine.js';
export { showPath } from '../tools/areas.js';
export {
  InteractiveTerminalError,
  openInteractiveTerminal,
  type InteractiveTerminal,
  type TerminalExit,
} from '../runner/interactive.js';
// MCP servers outside a session: `keel mcp` (add, remove, approve a project's .mcp.json, list and test them).
export {
  addMcpServer,
  approveProjectMcp,
  inspectMcpServers,
  McpAdminError,
  projectMcpStatus,
  removeMcpServer,
  revokeProjectMcp,
  setMcpToolEnabled,
  type McpInspection,
  type ProjectMcpStatus,
} from './mcp/admin.js';
