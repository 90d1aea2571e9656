import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readJsonLines, type FileDigest, type LineProblem } from '../../../../main/core/imports/jsonl.js';

// Issue 35: another tool's JSON Lines read in large chunks, split by hand (core/imports/jsonl.ts).

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keel-jsonl-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function read(bytes: Buffer) {
  const file = path.join(dir, `f${Math.random().toString(36).slice(2)}.jsonl`);
  fs.writeFileSync(file, bytes);
  const problems: LineProblem[] = [];
  let digest: FileDigest | undefined;
  const lines: { line: number; value: unknown }[] = [];
  for await (const line of readJsonLines(
    file,
    (p) => problems.push(p),
    (d) => (digest = d),
  ))
    lines.push(line);
  const expected = { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
  return { lines, problems: problems.map((p) => [p.line, p.file === file]), digest, expected };
}

describe('readJsonLines', () => {
  it('numbers lines as readline did (LF, CRLF, a lone CR, blank lines, a BOM, no final newline) and names bad ones', async () => {
    const text = '\uFEFF{"a":1}\r\n\n{"b":2}\r{"c":"é"}\nnot json\n  \n{"d":[1,2]}';
    const { lines, problems, digest, expected } = await read(Buffer.from(text, 'utf8'));
    expect(lines).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: { b: 2 } },
      { line: 4, value: { c: 'é' } },
      { line: 7, value: { d: [1, 2] } },
    ]);
    expect(problems).toEqual([[5, true]]);
    expect(digest).toEqual(expected);
  });

  it('reads lines across chunk boundaries, longer than a chunk, with multi-byte characters cut by a chunk', async () => {
    // Lines of ~700 KB (longer than a 256 KB chunk) and many short ones whose ends fall anywhere in a chunk.
    const long = { text: 'ü€𝄞'.repeat(100_000) };
    const short = Array.from({ length: 5000 }, (_, i) => ({ i, s: 'ß'.repeat(i % 97) }));
    const values = [long, ...short, long, { end: true }];
    const bytes = Buffer.from(values.map((v) => JSON.stringify(v)).join('\n') + '\n', 'utf8');
    const { lines, problems, digest, expected } = await read(bytes);
    expect(problems).toEqual([]);
    expect(lines.map((l) => l.value)).toEqual(values);
    expect(lines.map((l) => l.line)).toEqual(values.map((_, i) => i + 1));
    expect(digest).toEqual(expected);
  });
});
