// The running totals a log keeps beside its projection (a leaf: the fold, its snapshot and the log's types share it).
import type { Usage } from '../../common/events.js';

/** Token counts summed over a session's assistant messages. */
export type UsageTotals = {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of outputTokens, those spent reasoning (only where the provider reported them). */
  reasoningTokens: number;
};

/** One recorded request's usage: an assistant message's, or the summary requests of a compaction (#31). */
export type UsageRecord = {
  seq: number;
  kind: 'assistant_message' | 'compaction';
  at: string;
  /** The model that answered, as the event names it (absent in older logs). */
  model?: string | undefined;
  usage: Usage;
};

/** Running totals over every event of a log (rewound ones too), kept beside its projection. */
export type LogTallies = {
  /** How many user messages the log holds (turn N is the Nth). */
  userMessages: number;
  usage: UsageTotals;
};
