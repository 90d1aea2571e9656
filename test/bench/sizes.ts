/** How big each benchmark's workload is. `full` is what the README's results table reports. */
export type Sizes = {
  /** Conversation steps persisted by every peer (append latency and bytes per step). */
  conversationSteps: number;
  /** The step at which bytes written per step are reported (a window of steps centred on it). */
  bytesAtStep: number;
  /** Events written by the batched-append throughput bench, and the batch size. */
  batchedEvents: number;
  batchSize: number;
  /** LangGraph rewrites its whole state per put, so its batched run is capped lower (quadratic). */
  langgraphBatchedMessages: number;
  /** Events in the big session that is opened and projected. */
  projectEvents: number;
  /**
   * Timed repetitions of open + project (median reported): of the compacted session (cheap, every
   * peer), of the uncompacted one (reads everything), and of LangGraph's uncompacted thread, which
   * deserialises every message object (tens of seconds at 100k).
   */
  projectRuns: number;
  projectPlainRuns: number;
  langgraphPlainRuns: number;
  /** Sessions in the home that is listed, and the page size. */
  listSessions: number;
  pageSize: number;
  listRuns: number;
  /** Messages in the full-text index, spread over sessions of this many messages. */
  ftsMessages: number;
  ftsMessagesPerSession: number;
  ftsRunsPerQuery: number;
  /** Session lengths at which a turn's harness overhead is measured, and timed turns per length. */
  turnEventCounts: readonly number[];
  turnRuns: number;
  /** Deltas streamed through a turn to time provider delta → subscriber callback. */
  deltaCount: number;
  /** Timed run_command spawns per sandbox mode. */
  runnerSpawnRuns: number;
  /** Megabytes a flooding command writes while the runner captures it. */
  floodMb: number;
  /** Files in the tree grep searches. */
  grepFiles: number;
  /** Bytes of each pathological text shape fed through capture, redaction, counting and projection. */
  pathologicalBytes: number;
  /** Timed runs per stage and shape (median reported). */
  pathologicalRuns: number;
  /** Events in the session whose reasoning is replayed, and timed projections of it (median reported). */
  reasoningEvents: number;
  reasoningRuns: number;
  /** Timed spawns of the built CLI per command (`cli-start`, median reported). */
  cliStartRuns: number;
};

/** Named size profiles: `full` (default), `quick` (--quick) and `tiny` (the smoke test). */
export const SIZE_PROFILES = {
  full: {
    conversationSteps: 400,
    bytesAtStep: 200,
    batchedEvents: 50_000,
    batchSize: 100,
    langgraphBatchedMessages: 2_000,
    projectEvents: 100_000,
    projectRuns: 9,
    projectPlainRuns: 3,
    langgraphPlainRuns: 1,
    listSessions: 10_000,
    pageSize: 50,
    listRuns: 15,
    ftsMessages: 1_000_000,
    ftsMessagesPerSession: 1_000,
    ftsRunsPerQuery: 9,
    turnEventCounts: [100, 1_000, 10_000, 100_000],
    turnRuns: 15,
    deltaCount: 10_000,
    runnerSpawnRuns: 21,
    floodMb: 100,
    grepFiles: 10_000,
    pathologicalBytes: 1024 * 1024,
    pathologicalRuns: 5,
    reasoningEvents: 1_000,
    reasoningRuns: 9,
    cliStartRuns: 21,
  },
  quick: {
    conversationSteps: 220,
    bytesAtStep: 200,
    batchedEvents: 10_000,
    batchSize: 100,
    langgraphBatchedMessages: 1_000,
    projectEvents: 20_000,
    projectRuns: 5,
    projectPlainRuns: 2,
    langgraphPlainRuns: 1,
    listSessions: 1_000,
    pageSize: 50,
    listRuns: 9,
    ftsMessages: 50_000,
    ftsMessagesPerSession: 500,
    ftsRunsPerQuery: 5,
    turnEventCounts: [100, 1_000],
    turnRuns: 7,
    deltaCount: 2_000,
    runnerSpawnRuns: 9,
    floodMb: 20,
    grepFiles: 2_000,
    pathologicalBytes: 1024 * 1024,
    pathologicalRuns: 3,
    reasoningEvents: 1_000,
    reasoningRuns: 5,
    cliStartRuns: 9,
  },
  tiny: {
    conversationSteps: 24,
    bytesAtStep: 16,
    batchedEvents: 200,
    batchSize: 50,
    langgraphBatchedMessages: 100,
    projectEvents: 300,
    projectRuns: 2,
    projectPlainRuns: 1,
    langgraphPlainRuns: 1,
    listSessions: 30,
    pageSize: 10,
    listRuns: 2,
    ftsMessages: 400,
    ftsMessagesPerSession: 100,
    ftsRunsPerQuery: 1,
    turnEventCounts: [50, 500],
    turnRuns: 2,
    deltaCount: 200,
    runnerSpawnRuns: 2,
    floodMb: 1,
    grepFiles: 50,
    pathologicalBytes: 64 * 1024,
    pathologicalRuns: 1,
    reasoningEvents: 100,
    reasoningRuns: 1,
    cliStartRuns: 2,
  },
} as const satisfies Record<string, Sizes>;

export type SizeName = keyof typeof SIZE_PROFILES;
