import { createHash } from 'node:crypto';
import fs from 'node:fs';
import readline from 'node:readline';
import type { z } from 'zod';

/** A line of another tool's file that could not be read: named by file and 1-based line, then skipped. */
export type LineProblem = { file: string; line: number; message: string };

/** One parsed line: its 1-based number and its JSON value. */
export type JsonLine = { line: number; value: unknown };

/** What reading a whole file gave besides its lines: the sha256 and size of the bytes read. */
export type FileDigest = { sha256: string; bytes: number };

/**
 * Reads a JSON Lines file line by line (never the whole file in memory at once): yields each line's JSON
 * value, reports a line that is not JSON through `problem` and goes on. `digest` is filled once the file
 * has been read to its end, with the hash of exactly the bytes read.
 */
export async function* readJsonLines(
  file: string,
  problem: (problem: LineProblem) => void,
  digest?: (digest: FileDigest) => void,
): AsyncGenerator<JsonLine> {
  const hash = createHash('sha256');
  let bytes = 0;
  // Larger reads than the 64 KB default: each chunk is a trip through the thread pool (~10 ms of idle per
  // 1,000-record session at 64 KB); 256 KB keeps the buffers the stream holds small.
  const stream = fs.createReadStream(file, { highWaterMark: 1 << 18 });
  stream.on('data', (chunk) => {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  });
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  for await (const raw of lines) {
    line++;
    const text = line === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (text.trim() === '') continue;
    try {
      yield { line, value: JSON.parse(text) as unknown };
    } catch (error) {
      problem({
        file,
        line,
        message: `not JSON (${error instanceof Error ? error.message : String(error)})`,
      });
    }
  }
  digest?.({ sha256: hash.digest('hex'), bytes });
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
