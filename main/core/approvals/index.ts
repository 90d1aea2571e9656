export * from './policy.js';
export * from './grants.js';
export * from './state.js';
export * from './decide.js';
