/*
 * The setup a user brings (Claude Code's `.claude/`, the shared `.agents/`, Codex's `.codex/hooks.json`,
 * Keel's `.keel/`), from their home and from the project, and the trust of the project's files.
 */
export { LOCATIONS } from './discover.js';
export {
  defaultUserHome,
  loadSetup,
  type LoadedSetup,
  type LoadSetupOptions,
  type SetupFile,
  type SetupResource,
  type UntrustedSetupFile,
} from './load.js';
export { type HooksBlock, type SettingsFile } from './parse.js';
export { approveProjectSetup, projectSetupTrust, revokeProjectSetup, SetupTrustError } from './trust.js';
export {
  addKeelRule,
  applyPermissionRules,
  projectRules,
  removeKeelRule,
  RulesError,
  type RulesReport,
} from './rules.js';
