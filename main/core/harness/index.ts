/*
 * The core's front door: the only module of main/core that the hosts (main/ipc, main/cli, main/server, the
 * Electron shell) import (eslint.config.js LAYERS holds it). What a host does with a session goes through the
 * harness's own modules (first block); the second block is what hosts read of the core's rooms (the log's
 * errors, the models' catalogue, the trace, history); the last is what they take from below the core (the
 * home and settings, providers' keys, the sandbox, the runner). A rule a host needs (a guard, a decision
 * kept as a project rule) is written in this folder once, never in a host.
 */

// The harness: sessions, turns, approvals, checkouts' review, compaction, export / import, the box.
// issue #32: files attached to a prompt
export {
  AttachmentError,
  type AttachmentInput,
  checkAttachment,
  checkAttachments,
  keepAttachments,
} from './attachments.js';
export {
  planUploads,
  stageUploads,
  UPLOAD_MAX_BYTES,
  uploadFromFile,
  type UploadInput,
  uploadName,
  uploadsNote,
} from './uploads.js';
// Issue #32: background commands in the terminal dock.
export { backgroundCommandsOf, type BackgroundCommandView } from './backgroundLog.js';
export { previewApproval } from './approvalPreview.js';
export { decideApproval, type Decided, revokeGrant } from './approvals.js';
export { readArtifactImage, readArtifactPage } from './artifactPages.js';
export { readSessionBox, shellStartFolder } from './box.js';
export { type BudgetChange, sessionCost, setBudget } from './budget.js';
export { compactNow, comparePayloads, runCompaction } from './compaction.js';
export { describeError } from './describeError.js';
// The refusals hosts tell apart (errors.ts is their one list).
export * from './errors.js';
export { eventsFile, onIndexNotice, resolveHome, sessionDir, sweepDeadScratch } from './start.js';
export { createHarness, type LocalHarnessSession } from './harness.js';
// Issue #36: checkout storage, `keel gc`.
export {
  type CheckoutStorageEntry,
  type CheckoutStorageReport,
  checkoutStorage,
  collectCheckouts,
} from './checkoutStorage.js';
export { type CheckoutKindReport, checkoutKindReport, setCheckoutKind } from './checkoutKind.js';
export { withWritableSession } from './lock.js';
export {
  checkPromptSize,
  checkSessionPrompt,
  guardNewTurn,
  PROMPT_WINDOW_SHARE,
  PromptTooLargeError,
  UncommittedChangesError,
} from './newTurn.js';
// Issue 37: the composer's `/` commands and `@` mentions.
export { listCommands, type SlashCommand } from './commands.js';
export { completeMentions, type Mention } from './mentions.js';
export { commitHistory, newTurnWarning, readFileVersions, reviewPersistentDirs } from './review.js';
export { streamHarness } from './stream.js';
// Issue #30: plan mode (on / off, a plan's decision, the plans waiting).
export {
  applyPlanMode,
  decidePlan,
  type PendingPlan,
  pendingPlans,
  type PlanDecided,
  type PlanDecision,
  setPlanMode,
} from './plan.js';
export { exportSession, importSession, InvalidExportError } from './transfer.js';
// Issue 35: another tool's history (Claude Code, Codex) as Keel sessions.
export {
  type HistoryImportOptions,
  type HistoryImportReport,
  importHistory,
  keelId as historySessionId,
} from './historyImport.js';
export { IMPORT_TOOLS, type ImportTool } from '../imports/mapped.js';
export { STOP_REQUEST_FILE } from './turnHost.js';
export { type TurnDelta, TurnManager, type TurnReports } from './turns.js';
export type { Harness, HarnessMessage, HarnessStreamPart, SessionSetup } from './types.js';
export { systemPromptFor } from './workspace.js';
export { changePolicy, checkPolicyChange, type PolicyChange } from './policyChange.js';

// The core's rooms, as hosts read them.
export { allowedScopes, fetchHostOf, type ScopeKind } from '../approvals/decide.js';
export { type GrantRecord, listGrants } from '../approvals/grants.js';
export { policyChangeProblem, toolModeFor } from '../approvals/policy.js';
export { APPROVAL_KINDS, pendingApprovals } from '../approvals/state.js';
export {
  type CompactionRecord,
  inspectCompactions,
  inspectSessionCompactions,
} from '../compaction/inspect.js';
export { type ForkReport, forkSession } from '../history/fork.js';
export { revertChanges, type RevertReport, type RevertTarget, RevertTargetError } from '../history/revert.js';
export { type RewindReport, rewindSession } from '../history/rewind.js';
export { listUserSnapshots, type RestoreReport, restoreUserSnapshot } from '../history/userSnapshot.js';
export { importMarkOf, sessionNetworkAllow, unconfirmedEndpoint } from '../log/imported.js';
export { withIndexBehind } from '../log/indexLag.js';
export { openSessionIndex } from '../log/indexRebuild.js';
export { newSessionId } from '../log/sessionId.js';
export { SessionLog } from '../log/sessionLog.js';
export {
  addMcpServer,
  approveProjectMcp,
  callMcpTool,
  getMcpPrompt,
  inspectMcpServers,
  listMcpPrompts,
  listMcpResources,
  McpAdminError,
  type McpInspection,
  projectMcpStatus,
  type ProjectMcpStatus,
  removeMcpServer,
  revokeProjectMcp,
  setMcpToolEnabled,
} from '../mcp/admin.js';
export { listToolRules, realProjectFolder, revokeToolRule } from '../mcp/toolRules.js';
// Issue 33: MCP prompts (the composer's / menu) and resources, as hosts show them; OAuth sign-in of HTTP servers.
export { loginMcpServer, logoutMcpServer, mcpSignInState } from '../mcp/auth.js';
// Issue 33: Settings → MCP servers (the CLI's fields, sign-in for a host showing the URL, where tokens are kept).
export { type McpSignIn, type McpSignInState, startMcpSignIn } from '../mcp/auth.js';
export {
  type ConfiguredMcpServer,
  configuredMcpServers,
  type McpServerFields,
  mcpServerConfigOf,
  saveMcpServer,
} from '../mcp/serverFields.js';
export { mcpTokenStore, type SecretEncryptor, useKeychainForMcpTokens } from '../mcp/secretStore.js';
export type { McpPromptInfo, McpPromptMessages, McpResourceInfo } from '../../mcp/resources.js';
export {
  catalogueView,
  chooseModel,
  type ModelChoice,
  ModelChoiceError,
  type ModelRequest,
  refreshServedModels,
  rememberContextWindow,
  summarizeServed,
} from '../models/index.js';
export { readPersistentConfig, writePersistentConfig } from '../persistent/config.js';
export { runGit } from '../persistent/git.js';
export {
  commitDirs,
  discardDirs,
  markTurnStarted,
  openCheckout,
  persistentConfigOf,
} from '../persistent/turnCheckouts.js';
export type { CommitReport } from '../persistent/types.js';
export { formatPayloadText, projectView } from '../projection/index.js';
// Issue 33 (keel acp): a session's visible events for a replay, and whether a provider has a key here.
export { visibleEvents } from '../projection/rewind.js';
// Issue 30: the setup a user brings, and the trust of a project's copy.
export {
  addKeelRule,
  approveProjectSetup,
  defaultUserHome,
  loadSetup,
  projectRules,
  projectSetupTrust,
  removeKeelRule,
  revokeProjectSetup,
  RulesError,
  type RulesReport,
  SetupTrustError,
} from '../setup/index.js';
// Issue 30 (skills helper): custom commands for the composer's `/` menu and `keel run "/name args"`.
export {
  commandModelFor,
  type ExpandedPrompt,
  expandPrompt,
  expandSessionPrompt,
  type PromptCommand,
  promptCommands,
  readCustomSetup,
  type SetupPlace,
} from './customCommands.js';
// Issue 33: MCP prompts as `/` commands beside the command files (expanded by expandSessionPrompt).
export { mcpPromptCommands, sessionPromptCommands, sessionResourceMentions } from './mcpCommands.js';
export { DEFAULT_SYSTEM_PROMPT } from '../prompts/system.js';
export { DEFAULT_TRACE_DEPTH, readTraceSummary } from '../trace/index.js';
export { type TurnOutcome, TurnSetupError } from '../turn/engine.js';
export { loadSessionState } from '../turn/loadState.js';
export { foldSession, needsModel, unansweredCalls } from '../turn/state.js';
export { formatUsd } from '../turn/budget.js';

// Below the core: the home and its settings, providers, the sandbox, the runner, MCP servers' config.
export {
  createProvider,
  ProviderError,
  type ProviderKeys,
  providerKey,
  toProviderError,
} from '../../providers/index.js';
// Issue 34: the local model's process launcher (the app's utility process) and shutdown.
export {
  portLauncher,
  setLocalWorkerLauncher,
  stopLocalModels,
  type WorkerLauncher,
} from '../../providers/index.js';
export {
  LOCAL_CATALOGUE,
  localModelsDir,
  resolveModelSource,
  suggestedLocalModel,
  suggestLocalModel,
} from '../../providers/local/catalogue.js';
export { detectLocalMachine } from '../../providers/local/host.js';
export type { LocalMachine } from '../../providers/local/protocol.js';
export { pullModel, type PullProgress } from '../../providers/local/download.js';
export { localModelPin } from '../../providers/local/pin.js';
export {
  classifyPullFailure,
  createLocalPulls,
  listLocalModels,
  localCatalogueBase,
  localMachineSuggestion,
  type LocalModelView,
  type LocalPullUpdate,
} from './localModels.js';
export { effectiveEffort, reasoningChoices } from '../../providers/reasoning.js';
export { runCommand, type RunningCommand } from '../../runner/boxedCommand.js';
export { createFlowControl, type FlowControl } from '../../runner/flow.js';
export {
  type InteractiveTerminal,
  InteractiveTerminalError,
  openInteractiveTerminal,
  type TerminalExit,
} from '../../runner/interactive.js';
export { detectSandbox, type SandboxInfo } from '../../sandbox/box.js';
export { isLeaseStale, type SessionSummary } from '../../store/sessionIndex.js';
export { readSettings, type Settings, writeSettings } from '../../store/settings.js';
// Issue #37: the one API key file (the app's OS keychain entries, serve's key-file entries) and its ciphers.
export {
  type KeyChanges,
  type KeyCipherName,
  homeKeyCipher,
  homeStoredKeys,
  KEYS_FILE,
  type ProviderKeyName,
  readKeyFile,
  writeKeyFile,
} from '../../store/keyFile.js';
export { fileKeyCipher, type SecretCipher } from '../../store/mcpCredentials.js';
export { readOnlyPathsFor } from '../../tools/runCommandTool.js';
