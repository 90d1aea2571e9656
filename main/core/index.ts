/** keel/core: the harness as a library. Everything exported here runs under plain Node. */
export * from './log/events.js';
