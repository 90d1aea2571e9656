// Token counting in linear time. js-tiktoken's BPE merge is quadratic in the length of one pre-tokenizer
// piece: a 16,000-character line of `=` cost 36 s, a 30,000-character tool name 133 s. Long stretches are
// cut into short pieces before BPE, and repeated pieces (runs, deep nesting, any periodic text) are counted
// once per process.

/** A stretch of non-space (or of whitespace) longer than this is cut into pieces of this many characters. */
export const CHUNK_CHARS = 64;

/**
 * The documented error bound of chunkedCount against the exact count: at most this many tokens per cut
 * (cuts = chunkCuts(text)), in either direction. Tested against exact counts in test/attacks.
 */
export const MAX_ERROR_PER_CUT = 2;

// Where ordinary text is cut: after a non-space followed by a space, after a line break followed by a
// letter or digit. No pre-tokenizer piece of cl100k or o200k spans either point (o200k's punctuation
// piece takes line breaks and slashes after it, `}\n\n//`, so a break before other characters is no cut).
const WORD_CUT = /\S(?= )|\n(?=[\p{L}\p{N}])/gu;

/**
 * Characters of distinct long-stretch pieces counted exactly in one text; the rest of them is estimated
 * at the ratio measured on these (random base64 without line breaks: within 2% at 1 MB, tested).
 */
export const ESTIMATE_AFTER_CHARS = 16 * 1024;

/** Pieces counted at most once per counter; the cache is dropped when it holds this many. */
const CACHE_LIMIT = 8192;

// A stretch longer than CHUNK_CHARS, tried only where a stretch starts (else a text of 64-character
// words costs 64 steps per character).
const LONG_STRETCH = new RegExp(`(?<!\\S)\\S{${CHUNK_CHARS + 1},}|(?<!\\s)\\s{${CHUNK_CHARS + 1},}`, 'g');

/** The ordinary segments and the long-stretch pieces `text` is counted as, in order. */
export function chunkText(text: string): { ordinary: string[]; pieces: string[] } {
  const ordinary: string[] = [];
  const pieces: string[] = [];
  let cursor = 0;
  LONG_STRETCH.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = LONG_STRETCH.exec(text)) !== null) {
    if (match.index > cursor) ordinary.push(text.slice(cursor, match.index));
    const stretch = match[0];
    let at = 0;
    while (at < stretch.length) {
      let end = Math.min(at + CHUNK_CHARS, stretch.length);
      // Never cut a surrogate pair: both halves would count as replacement characters.
      if (end < stretch.length && isHighSurrogate(stretch.charCodeAt(end - 1))) end += 1;
      pieces.push(stretch.slice(at, end));
      at = end;
    }
    cursor = match.index + stretch.length;
  }
  if (cursor < text.length) ordinary.push(text.slice(cursor));
  return { ordinary, pieces };
}

/** Cuts chunkedCount makes in `text` beyond the pre-tokenizer's: both edges of each long stretch and between its pieces. */
export function chunkCuts(text: string): number {
  let cuts = 0;
  LONG_STRETCH.lastIndex = 0;
  let match: RegExpExecArray | null;
  while ((match = LONG_STRETCH.exec(text)) !== null) cuts += Math.ceil(match[0].length / CHUNK_CHARS) + 1;
  return cuts;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * A counter of `encode` that takes linear time in the text's length: ordinary text word by word, each
 * long stretch as pieces of CHUNK_CHARS, each distinct word or piece counted once. Differs from the exact
 * count by at most MAX_ERROR_PER_CUT tokens per cut, until ESTIMATE_AFTER_CHARS of distinct pieces in
 * one text were counted (an estimate from then on).
 */
export function chunkedCounter(encode: (text: string) => number): (text: string) => number {
  const cache = new Map<string, number>();
  const countPiece = (piece: string): number => {
    let count = cache.get(piece);
    if (count === undefined) {
      if (cache.size >= CACHE_LIMIT) cache.clear();
      count = encode(piece);
      cache.set(piece, count);
    }
    return count;
  };
  return (text) => {
    if (text === '') return 0;
    const { ordinary, pieces } = chunkText(text);
    let total = 0;
    for (const segment of ordinary) {
      // Ordinary text is counted word by word (see WORD_CUT: the sum is exact), each distinct word once.
      WORD_CUT.lastIndex = 0;
      let from = 0;
      let cut: RegExpExecArray | null;
      while ((cut = WORD_CUT.exec(segment)) !== null) {
        const end = cut.index + cut[0].length; // an astral character is two code units
        total += countPiece(segment.slice(from, end));
        from = end;
      }
      total += countPiece(segment.slice(from));
    }
    // Long-stretch pieces BPE has not seen cost ~64² steps each: past ESTIMATE_AFTER_CHARS of them in
    // one text, the rest is estimated at the tokens per character measured on the ones counted.
    let missedChars = 0;
    let countedChars = 0;
    let countedTokens = 0;
    for (const piece of pieces) {
      const known = cache.get(piece);
      if (known !== undefined) {
        total += known;
      } else if (missedChars < ESTIMATE_AFTER_CHARS) {
        missedChars += piece.length;
        const count = countPiece(piece);
        countedChars += piece.length;
        countedTokens += count;
        total += count;
      } else {
        total += Math.ceil((piece.length * countedTokens) / countedChars);
      }
    }
    return total;
  };
}
