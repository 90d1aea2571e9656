export * from './types.js';
export * from './summary.js';
export * from './read.js';
