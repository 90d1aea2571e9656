/*
 * What the hosts (the app's handlers and keel serve in main/ipc, the CLI, the Electron shell) take from below
 * the core, declared in one place: the home and its settings, the session index, providers' keys and errors,
 * the machine's sandbox and path confinement. Hosts import these from here, never from store, providers or
 * sandbox directly (eslint.config.js LAYERS), so what a host may touch below the harness is this list.
 */
export { resolveHome } from '../store/home.js';
export { readSettings, writeSettings, SettingsError, type Settings } from '../store/settings.js';
export { SessionIndex, isLeaseStale, type SessionSummary } from '../store/sessionIndex.js';
export { createProvider, toProviderError, ProviderError, type ProviderKeys } from '../providers/index.js';
export { detectSandbox, type SandboxInfo } from '../sandbox/box.js';
export type { Redactor } from '../sandbox/redact.js';
export { resolveInWorkspace } from '../sandbox/paths.js';
