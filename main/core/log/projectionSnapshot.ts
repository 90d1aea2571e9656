import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ProjectionFold } from '../projection/fold.js';
import { crashPoint } from '../crash.js';
import type { EventRow } from './logRows.js';
import type { LogTallies } from './logTallies.js';

/*
 * The projection snapshot: `<session>/projection-snapshot.json`, the log's projection and tallies as of one seq,
 * so opening a long uncompacted session reads one file instead of decoding every event. A cache, never a
 * second source of truth: it names the seq it covers and the digests of that row and of row 1, and the hash of
 * its body; anything that does not match the log (or is damaged, cut short, of another version, or ahead of
 * the log) is ignored and the projection is rebuilt from events. Edits that recompute the hash are not
 * defended against: whoever can write this file can write events.sqlite beside it.
 */

/** The snapshot's file name in the session folder. */
export const SNAPSHOT_FILE = 'projection-snapshot.json';
/** Written first, then renamed over the snapshot: a crash leaves the old snapshot or none, never half of one. */
const TEMP_FILE = 'projection-snapshot.json.tmp';
const FORMAT = 'keel.projection-snapshot';
/** Bumped when the stored shape changes; a snapshot of another version is rebuilt. */
export const SNAPSHOT_VERSION = 1;

const Header = z.object({
  format: z.literal(FORMAT),
  version: z.number().int(),
  sessionId: z.string(),
  seq: z.number().int().positive(),
  digest: z.string().min(1),
  firstDigest: z.string().min(1),
  bodyBytes: z.number().int().nonnegative(),
  bodySha256: z.string().length(64),
});

const count = z.number().int().nonnegative();
const Tallies = z.object({
  userMessages: count,
  usage: z.object({
    inputTokens: count,
    outputTokens: count,
    cacheReadTokens: count,
    cacheWriteTokens: count,
    reasoningTokens: count,
  }),
});

/** What a snapshot holds once read and checked on its own (the caller checks it against the log). */
export type Snapshot = {
  sessionId: string;
  seq: number;
  digest: string;
  firstDigest: string;
  projection: ProjectionFold;
  /** Stored when the writer had them (each is computed only when first asked for). */
  tallies?: LogTallies;
  messageIds?: Set<string>;
};

/** The digest a snapshot names a row by: every stored column of it. */
export function rowDigest(row: EventRow): string {
  return createHash('sha256')
    .update(`${row.seq}\n${row.kind}\n${row.at}\n`)
    .update(row.body)
    .digest('base64url');
}

/** Reads and checks the snapshot of a session folder; a reason instead when there is none or it is unusable. */
export function readSnapshot(dir: string): Snapshot | { problem: string } {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(path.join(dir, SNAPSHOT_FILE));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { problem: 'no snapshot' };
    return { problem: `unreadable: ${(error as Error).message}` };
  }
  const newline = bytes.indexOf(10);
  if (newline < 0) return { problem: 'no header line (cut short?)' };
  let header: z.infer<typeof Header>;
  try {
    const parsed = Header.safeParse(JSON.parse(bytes.subarray(0, newline).toString('utf8')));
    if (!parsed.success) return { problem: 'not a projection snapshot header' };
    header = parsed.data;
  } catch {
    return { problem: 'header is not JSON' };
  }
  if (header.version !== SNAPSHOT_VERSION)
    return { problem: `version ${header.version}, not ${SNAPSHOT_VERSION}` };
  const body = bytes.subarray(newline + 1);
  if (body.length !== header.bodyBytes)
    return { problem: `body is ${body.length} bytes, not ${header.bodyBytes}` };
  if (createHash('sha256').update(body).digest('hex') !== header.bodySha256) {
    return { problem: 'body does not match its hash' };
  }
  try {
    const stored = JSON.parse(body.toString('utf8')) as {
      projection?: unknown;
      tallies?: unknown;
      messageIds?: unknown;
    };
    const tallies = stored.tallies === undefined ? undefined : Tallies.parse(stored.tallies);
    const ids = stored.messageIds === undefined ? undefined : z.array(z.string()).parse(stored.messageIds);
    const projection = ProjectionFold.fromState(stored.projection);
    if (projection.lastSeq > header.seq) return { problem: 'projection is ahead of its header' };
    return {
      sessionId: header.sessionId,
      seq: header.seq,
      digest: header.digest,
      firstDigest: header.firstDigest,
      projection,
      ...(tallies ? { tallies } : {}),
      ...(ids ? { messageIds: new Set(ids) } : {}),
    };
  } catch (error) {
    return { problem: `body is not a snapshot: ${(error as Error).message}` };
  }
}

/**
 * Writes the snapshot (temp file, then rename over the old one). Not fsync'd: a snapshot a power cut tore
 * fails its hash and is rebuilt, which costs time, never correctness.
 */
export function writeSnapshot(dir: string, snapshot: Snapshot): void {
  const body = Buffer.from(
    JSON.stringify({
      projection: snapshot.projection.toState(),
      ...(snapshot.tallies ? { tallies: snapshot.tallies } : {}),
      ...(snapshot.messageIds ? { messageIds: [...snapshot.messageIds] } : {}),
    }),
  );
  const header: z.infer<typeof Header> = {
    format: FORMAT,
    version: SNAPSHOT_VERSION,
    sessionId: snapshot.sessionId,
    seq: snapshot.seq,
    digest: snapshot.digest,
    firstDigest: snapshot.firstDigest,
    bodyBytes: body.length,
    bodySha256: createHash('sha256').update(body).digest('hex'),
  };
  const temp = path.join(dir, TEMP_FILE);
  const fd = fs.openSync(temp, 'w');
  try {
    fs.writeSync(fd, `${JSON.stringify(header)}\n`);
    const half = Math.floor(body.length / 2);
    fs.writeSync(fd, body, 0, half);
    crashPoint('during_snapshot_write');
    fs.writeSync(fd, body, half);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temp, path.join(dir, SNAPSHOT_FILE));
}
