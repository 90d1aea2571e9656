/** Compaction: trigger, range, summary from original events, the beforeRequest hook, the inspector. */
export * from './tokens.js';
export * from './trigger.js';
export * from './range.js';
export * from './summarize.js';
export * from './settings.js';
export * from './compact.js';
export * from './hook.js';
export * from './inspect.js';
