// Ack-based flow control for live terminal output, after VS Code's pty host: the consumer acknowledges
// the characters it has rendered; while more than the high watermark are unacknowledged the producer
// (a node-pty) is paused, so the program blocks on write instead of Keel or the UI buffering a flood.

/** Pause the producer once this many delivered characters are not yet acknowledged (VS Code's value). */
export const HIGH_WATERMARK_CHARS = 100_000;
/** Resume it once acknowledgements bring the unacknowledged count below this. */
export const LOW_WATERMARK_CHARS = 5_000;

/** The producer a flow controls: a pty (or anything that can stop and restart reading its output). */
export interface FlowSource {
  pause(): void;
  resume(): void;
}

/** Counters of one flow, for tests, benchmarks and diagnostics. */
export interface FlowStats {
  /** Characters handed to the consumer so far. */
  deliveredChars: number;
  /** The most characters that were ever delivered and not yet acknowledged at once. */
  maxUnackedChars: number;
  /** How many times the producer was paused. */
  pauses: number;
}

/**
 * One consumer's flow control. Characters are UTF-16 code units (`chunk.length`): a consumer acks exactly
 * the `length` of each chunk once it is rendered (xterm.js: in `write(chunk, callback)`).
 */
export interface FlowControl {
  /** Counts `chunk` as unacknowledged and hands it to `onData`; pauses every bound producer past the high watermark. */
  deliver(chunk: string): void;
  /** The consumer rendered `chars` more characters; producers resume once fewer than the low watermark are left. */
  ack(chars: number): void;
  /** Connects a producer (paused at once if the flow is behind); returns a function that disconnects and resumes it. */
  bind(source: FlowSource): () => void;
  /** The consumer went away: producers are resumed and never paused again; delivery continues uncounted. */
  release(): void;
  /** Delivered characters not yet acknowledged. */
  readonly unackedChars: number;
  /** True while the producers are held. */
  readonly paused: boolean;
  readonly released: boolean;
  readonly stats: Readonly<FlowStats>;
}

/** Options of createFlowControl. */
export interface FlowControlOptions {
  /** Receives every delivered chunk, in order (e.g. a push to the renderer). */
  onData?: (chunk: string) => void;
  highWatermarkChars?: number;
  lowWatermarkChars?: number;
}

/**
 * Creates a flow controller. Guarantees: while bound producers honour pause(), unacknowledged characters
 * stay below the high watermark plus what was already in flight when it was crossed (one pty read);
 * every delivered chunk reaches `onData` exactly once and in order; acks beyond what was delivered are
 * ignored (the count never goes negative). Throws on watermarks that are not 0 < low < high.
 */
export function createFlowControl(options: FlowControlOptions = {}): FlowControl {
  const high = options.highWatermarkChars ?? HIGH_WATERMARK_CHARS;
  const low = options.lowWatermarkChars ?? LOW_WATERMARK_CHARS;
  if (!(Number.isFinite(high) && Number.isFinite(low) && low > 0 && low < high)) {
    throw new RangeError(
      `flow control needs 0 < lowWatermarkChars < highWatermarkChars (got ${low} and ${high})`,
    );
  }
  const sources = new Set<FlowSource>();
  const stats: FlowStats = { deliveredChars: 0, maxUnackedChars: 0, pauses: 0 };
  let unacked = 0;
  let paused = false;
  let released = false;

  const setPaused = (next: boolean): void => {
    if (next === paused) return;
    paused = next;
    if (next) stats.pauses += 1;
    for (const source of sources) {
      if (next) source.pause();
      else source.resume();
    }
  };

  return {
    deliver(chunk) {
      if (chunk.length === 0) return;
      stats.deliveredChars += chunk.length;
      if (!released) {
        unacked += chunk.length;
        if (unacked > stats.maxUnackedChars) stats.maxUnackedChars = unacked;
        if (unacked > high) setPaused(true);
      }
      options.onData?.(chunk);
    },
    ack(chars) {
      if (!Number.isFinite(chars) || chars <= 0) return;
      unacked = Math.max(0, unacked - chars);
      if (paused && unacked < low) setPaused(false);
    },
    bind(source) {
      sources.add(source);
      if (paused) source.pause();
      return () => {
        if (!sources.delete(source)) return;
        if (paused) source.resume();
      };
    },
    release() {
      released = true;
      unacked = 0;
      setPaused(false);
    },
    get unackedChars() {
      return unacked;
    },
    get paused() {
      return paused;
    },
    get released() {
      return released;
    },
    get stats() {
      return { ...stats };
    },
  };
}
