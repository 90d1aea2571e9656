import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanOutput, createExcerptCollector } from '../../../main/runner/excerpt.js';
import { createExitMarkerScanner, wrapWithExitMarker } from '../../../main/runner/exitMarker.js';

describe('excerpt', () => {
  it('returns short output whole, cleaned, and not truncated', () => {
    const collector = createExcerptCollector({ headBytes: 100, tailBytes: 100 });
    collector.push('\u001b[32mok\u001b[0m\r\n');
    expect(collector.finish('a1')).toEqual({ text: 'ok\n', truncated: false, bytes: 13 });
  });

  it('keeps head and tail with an omission line naming the artifact', () => {
    const collector = createExcerptCollector({ headBytes: 64, tailBytes: 64 });
    for (let i = 0; i < 1000; i += 1) collector.push(`line ${i}\r\n`);
    const excerpt = collector.finish('artifacts/run-7.log');
    expect(excerpt.truncated).toBe(true);
    expect(excerpt.text.startsWith('line 0\nline 1\n')).toBe(true);
    expect(excerpt.text.endsWith('line 999\n')).toBe(true);
    expect(excerpt.text).toMatch(
      /\[\.\.\. \d+ bytes left out here; the whole output is in artifacts\/run-7\.log\]/,
    );
    expect(Buffer.byteLength(excerpt.text)).toBeLessThan(64 + 64 + 100);
  });

  it('strips an escape sequence even when it was split between chunks', () => {
    const collector = createExcerptCollector({ headBytes: 100, tailBytes: 100 });
    collector.push('a\u001b[3');
    collector.push('1mb\u001b[0m');
    expect(collector.finish('x').text).toBe('ab');
  });

  it('shows only the final state of a carriage-return progress line', () => {
    expect(cleanOutput('progress 10%\rprogress 50%\rprogress 100%\r\ndone\r\n')).toBe(
      'progress 100%\ndone\n',
    );
  });

  it('never cuts a multi-byte character and stays within its byte budget for any input', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme', maxLength: 200 }), { maxLength: 60 }), (chunks) => {
        const collector = createExcerptCollector({ headBytes: 50, tailBytes: 50 });
        for (const chunk of chunks) collector.push(chunk);
        const excerpt = collector.finish('h');
        // The input may itself contain U+FFFD (fast-check generates it); the excerpt must add none.
        const replacements = (text: string) => text.split('\uFFFD').length - 1;
        expect(replacements(excerpt.text)).toBeLessThanOrEqual(replacements(chunks.join('')));
        expect(excerpt.bytes).toBe(Buffer.byteLength(chunks.join('')));
        const body = excerpt.text.replace(
          /\n?\[\.\.\. \d+ bytes left out here; the whole output is in h\]\n/,
          '',
        );
        expect(Buffer.byteLength(body)).toBeLessThanOrEqual(100);
      }),
      { numRuns: 200 },
    );
  });
});

describe('exit marker', () => {
  const nonce = '0123abcd';
  const marker = `\u001b]7777;keel-exit;${nonce};42\u0007`;

  it('removes the marker and reports the exit code, for every way the marker can be split', () => {
    const stream = `before${marker}after`;
    for (let a = 0; a <= stream.length; a += 1) {
      for (let b = a; b <= stream.length; b += 7) {
        const scanner = createExitMarkerScanner(nonce);
        const parts = [stream.slice(0, a), stream.slice(a, b), stream.slice(b)].map((part) =>
          scanner.push(part),
        );
        const text = parts.map((part) => part.text).join('') + scanner.flush();
        expect(text).toBe('beforeafter');
        expect(parts.map((part) => part.exitCode).filter((code) => code !== undefined)).toEqual([42]);
      }
    }
  });

  it('ignores a marker with another nonce and passes look-alike text through', () => {
    const scanner = createExitMarkerScanner(nonce);
    const forged = '\u001b]7777;keel-exit;ffffffff;0\u0007';
    const scan = scanner.push(`${forged}\u001b]7777;keel`);
    expect(scan.exitCode).toBeUndefined();
    expect(scan.text + scanner.flush()).toBe(`${forged}\u001b]7777;keel`);
  });

  it('quotes the command so that quotes in it survive', () => {
    expect(wrapWithExitMarker(`echo 'it''s'`, nonce)).toContain(`bash -c 'echo '\\''it'\\'''\\''s'\\'''`);
  });
});
