export * from '../../common/traceSchema.js';
export type { SessionTraceSource, SummarizeOptions } from './types.js';
export * from './summary.js';
export * from './read.js';
