// Attack corpus: quadratic work on model- or project-controlled text (issue 15). No timing assertions:
// the counts and the chunking are asserted; time per MB is in `npm run bench` (pathological row).
import { Tiktoken } from 'js-tiktoken/lite';
import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadEstimator, type TokenEstimator } from '../../main/core/compaction/tokens.js';
import {
  CHUNK_CHARS,
  ESTIMATE_AFTER_CHARS,
  MAX_ERROR_PER_CUT,
  chunkCuts,
  chunkText,
  chunkedCounter,
} from '../../main/core/compaction/tokensChunked.js';

const encoder = new Tiktoken(cl100k);
let calls: string[] = [];
const exact = (text: string) => encoder.encode(text, [], []).length;
const recording = (text: string) => {
  calls.push(text);
  return exact(text);
};

/** Texts short enough to count exactly (a few thousand characters) with the shapes attacks use. */
const SHAPES: Record<string, string> = {
  'a run of =': '='.repeat(3000),
  'a run of one letter': 'a'.repeat(3000),
  'a long tool name': `run_${'x'.repeat(2500)}_tool`,
  'deep nesting': '{"a":'.repeat(600) + '1' + '}'.repeat(600),
  'brackets only': '[['.repeat(1500),
  'spaces, then a word': `${' '.repeat(3000)}word`,
  newlines: '\n'.repeat(3000),
  'base64, no newline': Buffer.from(Array.from({ length: 2400 }, (_, i) => (i * 7919) % 256)).toString(
    'base64',
  ),
  'prose with a long rule': `A heading\n${'-'.repeat(200)}\nSome text after it, and more words.\n`.repeat(20),
  'CJK without spaces': '漢字かなカナ'.repeat(150),
  'emoji run': '😀'.repeat(1000),
};

describe('token counting on pathological text', () => {
  it.each(Object.entries(SHAPES))('%s: within the documented bound of the exact count', (_name, text) => {
    const count = chunkedCounter(exact)(text);
    const cuts = chunkCuts(text);
    expect(Math.abs(count - exact(text))).toBeLessThanOrEqual(cuts * MAX_ERROR_PER_CUT);
  });

  it('never hands BPE a piece longer than CHUNK_CHARS (+1 for a surrogate pair) inside a long stretch', () => {
    const text = `${'='.repeat(30_000)} ${'a'.repeat(30_000)}${'😀'.repeat(5000)}${' '.repeat(10_000)}end`;
    const { ordinary, pieces } = chunkText(text);
    expect(pieces.join('') + ordinary.join('')).toHaveLength(text.length);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(CHUNK_CHARS + 1);
    for (const segment of ordinary) expect(segment.length).toBeLessThanOrEqual(CHUNK_CHARS);
    // Pieces are cut at code points: none starts with a low surrogate.
    for (const piece of pieces) expect(/^[\udc00-\udfff]/.test(piece)).toBe(false);
  });

  it('counts a repeated piece once: a 1 MB run costs a handful of BPE calls', () => {
    calls = [];
    const counter = chunkedCounter(recording);
    const count = counter('='.repeat(1_000_000));
    expect(count).toBeGreaterThan(0);
    expect(calls.length).toBeLessThanOrEqual(2);
    calls = [];
    counter('{"a":'.repeat(200_000));
    expect(calls.length).toBeLessThanOrEqual(CHUNK_CHARS);
    expect(calls.every((piece) => piece.length <= CHUNK_CHARS)).toBe(true);
  });

  it('leaves ordinary text exact', () => {
    const prose = 'The quick brown fox jumps over the lazy dog. function f(x) { return x + 1; }\n'.repeat(
      200,
    );
    expect(chunkedCounter(exact)(prose)).toBe(exact(prose));
  });

  describe('through the estimator compaction uses', () => {
    let estimator: TokenEstimator;
    beforeAll(async () => {
      estimator = await loadEstimator({ provider: 'openai', model: 'gpt-4' });
    });

    it('counts a 30,000-character tool name and a 16,000-character = line (the campaign inputs)', () => {
      calls = [];
      // Each would take minutes through plain BPE; the test's own timeout bounds it here.
      const name = estimator.count('x'.repeat(30_000));
      const line = estimator.count('='.repeat(16_000));
      expect(name).toBeGreaterThan(0);
      expect(line).toBeGreaterThan(0);
      expect(Math.abs(line - exact('='.repeat(4000)) * 4)).toBeLessThanOrEqual(
        chunkCuts('='.repeat(16_000)) * MAX_ERROR_PER_CUT,
      );
    });
  });
});

describe('ordinary text counted word by word', () => {
  it('is exact: cuts only where no pre-tokenizer piece spans (before a space, after a line break)', async () => {
    const o200k = new Tiktoken((await import('js-tiktoken/ranks/o200k_base')).default);
    const texts = [
      'end.\nNext line\n\n  indented  twice\tand tabs\r\nwindows line\n',
      "It's a test; don't split: (a, b) => a + b;\n}\n\n// comment\n",
      'Zahlen 12345 und Wörter, 漢字 かな, émigré naïve\n'.repeat(20),
      `${'QUJD'.repeat(16)}\n`.repeat(30),
      'emoji 😀 then space 😀😀 x\n😀\n',
    ];
    for (const encoder of [new Tiktoken(cl100k), o200k]) {
      const exactOf = (text: string) => encoder.encode(text, [], []).length;
      const counter = chunkedCounter(exactOf);
      for (const text of texts) expect(counter(text)).toBe(exactOf(text));
    }
  });
});

describe('past ESTIMATE_AFTER_CHARS of distinct pieces', () => {
  it('estimates random base64 without line breaks within 2% of the exact count, with bounded BPE work', () => {
    let seed = 12345;
    const bytes = Buffer.alloc(384 * 1024);
    for (let i = 0; i < bytes.length; i += 1) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      bytes[i] = seed >>> 24;
    }
    const text = bytes.toString('base64');
    calls = [];
    const estimated = chunkedCounter(recording)(text);
    const encodedChars = calls.reduce((sum, piece) => sum + piece.length, 0);
    expect(encodedChars).toBeLessThanOrEqual(ESTIMATE_AFTER_CHARS + CHUNK_CHARS);
    const exactCount = exact(text);
    expect(Math.abs(estimated - exactCount) / exactCount).toBeLessThanOrEqual(0.02);
  });
});
