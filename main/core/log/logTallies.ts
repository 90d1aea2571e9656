// The running totals a log keeps beside its projection (a leaf: the fold, its snapshot and the log's types share it).

/** Token counts summed over a session's assistant messages. */
export type UsageTotals = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of outputTokens, those spent reasoning (only where the provider reported them). */
  reasoningTokens: number;
};

/** Running totals over every event of a log (rewound ones too), kept beside its projection. */
export type LogTallies = {
  /** How many user messages the log holds (turn N is the Nth). */
  userMessages: number;
  usage: UsageTotals;
};
