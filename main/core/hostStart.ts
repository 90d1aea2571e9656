/*
 * The two entries of host.ts every host needs before anything else (the home, and the sweep of what killed
 * Keels left), in a module of their own: importing host.ts loads everything it lists (the tools, the runner,
 * the MCP admin), which a CLI command such as `keel sessions` never uses. host.ts re-exports both, so its list
 * is still the whole of what hosts take from below the core.
 */
export { resolveHome } from '../store/home.js';
export { sweepDeadScratch } from '../runner/boxRecords.js';
