import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type { z } from 'zod';

/** A line of another tool's file that could not be read: named by file and 1-based line, then skipped. */
export type LineProblem = { file: string; line: number; message: string };

/** One parsed line: its 1-based number and its JSON value. */
export type JsonLine = { line: number; value: unknown };

/** What reading a whole file gave besides its lines: the sha256 and size of the bytes read. */
export type FileDigest = { sha256: string; bytes: number };

/** Bytes read from a source file at a time. */
const CHUNK_BYTES = 1 << 18;
const LF = 0x0a;

/**
 * Reads a JSON Lines file line by line (never the whole file in memory at once): yields each line's JSON
 * value, reports a line that is not JSON through `problem` and goes on. `digest` is filled once the file
 * has been read to its end, with the hash of exactly the bytes read. Lines end at LF, CRLF or a lone CR (as
 * readline splits them).
 */
export async function* readJsonLines(
  file: string,
  problem: (problem: LineProblem) => void,
  digest?: (digest: FileDigest) => void,
): AsyncGenerator<JsonLine> {
  const hash = createHash('sha256');
  let bytes = 0;
  let line = 0;
  const parse = (raw: string): JsonLine | undefined => {
    line++;
    const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (text.trim() === '') return undefined;
    try {
      return { line, value: JSON.parse(text) as unknown };
    } catch (error) {
      problem({
        file,
        line,
        message: `not JSON (${error instanceof Error ? error.message : String(error)})`,
      });
      return undefined;
    }
  };
  // Read in large chunks and split by hand (readline's events and string decoder were a tenth of an import's
  // time): a chunk is one call, its lines are cut at LF bytes (never inside a UTF-8 character) and decoded
  // one by one. Synchronous reads: no trip through the thread pool per chunk.
  const fd = fs.openSync(file, 'r');
  try {
    const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
    let carry: Buffer | undefined;
    for (;;) {
      // A turn of the event loop per chunk: a long file does not hold back the thread's other work (a seal).
      await new Promise<void>((resolve) => setImmediate(resolve));
      const read = fs.readSync(fd, chunk, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      hash.update(chunk.subarray(0, read));
      bytes += read;
      let start = 0;
      for (let nl = chunk.indexOf(LF, 0); nl !== -1 && nl < read; nl = chunk.indexOf(LF, start)) {
        const raw = carry
          ? Buffer.concat([carry, chunk.subarray(start, nl)]).toString('utf8')
          : chunk.toString('utf8', start, nl);
        carry = undefined;
        start = nl + 1;
        for (const text of splitCarriageReturns(raw)) {
          const parsed = parse(text);
          if (parsed) yield parsed;
        }
      }
      if (start < read) {
        const rest = Buffer.from(chunk.subarray(start, read)); // a copy: the chunk is read into again
        carry = carry ? Buffer.concat([carry, rest]) : rest;
      }
    }
    if (carry) {
      for (const text of splitCarriageReturns(carry.toString('utf8'))) {
        const parsed = parse(text);
        if (parsed) yield parsed;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  digest?.({ sha256: hash.digest('hex'), bytes });
}

/** A line cut at LF, split again where readline would: CRLF is one break, a lone CR another. */
function splitCarriageReturns(raw: string): string[] {
  if (!raw.includes('\r')) return [raw];
  const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
  return text.split('\r');
}

/**
 * Checks one value against a schema; a mismatch is reported with the line and the first few fields zod
 * named, and undefined is returned so the caller skips the line.
 */
export function parseLine<S extends z.ZodType>(
  schema: S,
  file: string,
  { line, value }: JsonLine,
  what: string,
  problem: (problem: LineProblem) => void,
): z.infer<S> | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(line)'}: ${issue.message}`)
    .join('; ');
  problem({ file, line, message: `not a ${what} line this version of Keel reads (${issues}); skipped` });
  return undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
