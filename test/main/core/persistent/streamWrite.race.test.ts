import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { writeStreamConfined } from '../../../../main/core/persistent/streamWrite.js';
import { ConfinedFileError, PathEscapeError } from '../../../../main/sandbox/paths.js';
import type { Pinning } from '../../../../main/sandbox/paths.js';
import {
  OUTSIDE_SECRET,
  addedOutside,
  changedOutside,
  createFixture,
  outsideFilesContaining,
} from '../../sandbox/pathsFixture.js';
import type { Fixture } from '../../sandbox/pathsFixture.js';
import { startSwapper, type Swapper } from '../../sandbox/swapper.js';

// Staging (a host's `session.files.write`) streams into the workspace while a second process swaps, as fast
// as it can, ws/up between a real folder and a symlink to outside/dir: the parent of every staged file.
// Staging by temp file + rename by path loses this race (the temp file is created, or renamed, through the
// link); staging through the sandbox's pinned folders never writes a byte outside.
const SWAPPER = `
const fs = require('fs');
const [ws, outsideDir] = process.argv.slice(1);
// A sync loop never runs signal handlers: the parent SIGKILLs it, and it stops by itself after 60 s.
const deadline = Date.now() + 60000;
let swaps = 0;
const attempt = (fn) => { try { fn(); return true; } catch { return false; } };
// Staging creates missing parents: a folder it made at ws/up while the real one was moved aside is dropped.
const clear = () => {
  const stat = fs.lstatSync(ws + '/up', { throwIfNoEntry: false });
  if (stat?.isSymbolicLink()) fs.unlinkSync(ws + '/up');
  else if (stat) fs.rmSync(ws + '/up', { recursive: true });
};
const toLink = () => { fs.renameSync(ws + '/up', ws + '/up.real'); clear(); fs.symlinkSync(outsideDir, ws + '/up'); };
const toFolder = () => { clear(); fs.renameSync(ws + '/up.real', ws + '/up'); };
fs.writeSync(1, 'ready\\n');
while (Date.now() < deadline) {
  if (attempt(toLink)) swaps++;
  attempt(toFolder);
  if (swaps % 256 === 0) fs.writeSync(1, 'swaps ' + swaps + '\\n');
}
`;

let fixtureInUse: Fixture | undefined;
let swapper: Swapper | undefined;

afterEach(async () => {
  await swapper?.stop();
  swapper = undefined;
  fixtureInUse?.cleanup();
  fixtureInUse = undefined;
});

/** A source of several chunks, each after a turn of the event loop, so one write spans many swaps. */
async function* chunked(i: number): AsyncGenerator<Uint8Array | string> {
  for (let chunk = 0; chunk < 4; chunk += 1) {
    await nextTurn();
    yield chunk % 2 === 0 ? `PAYLOAD-${i}-${chunk};` : Buffer.from(`PAYLOAD-${i}-${chunk};`);
  }
}

const ITERATIONS = 1000;
const RACE_TIMEOUT_MS = 90_000;

describe.each<Pinning>(['procfd', 'portable'])('bad input: symlink races against staging [%s]', (pinning) => {
  it(
    `never stages a byte outside while a parent folder is swapped for a link under ${ITERATIONS * 3} writes`,
    async () => {
      // tmpfs when present: thousands of iterations in seconds; the race is about name resolution.
      const f = createFixture('ws', fs.existsSync('/dev/shm') ? '/dev/shm' : undefined);
      fixtureInUse = f;
      fs.mkdirSync(path.join(f.ws, 'up'));
      fs.writeFileSync(path.join(f.ws, 'up', 'target'), 'inside');
      fs.writeFileSync(path.join(f.outside, 'dir', 'target'), OUTSIDE_SECRET);
      const before = f.snapshotOutside();
      swapper = await startSwapper(SWAPPER, [f.ws, path.join(f.outside, 'dir')]);
      let written = 0;
      const refused: Record<string, number> = {};
      const other: string[] = [];
      for (let i = 0; i < ITERATIONS; i += 1) {
        for (const [arg, source] of [
          ['up/target', chunked(i)],
          [`up/new-${i}.txt`, chunked(i)],
          ['up/target', `PAYLOAD-${i}`],
        ] as const) {
          try {
            await writeStreamConfined(f.ws, arg, source, { pinning });
            written += 1;
          } catch (error) {
            if (error instanceof PathEscapeError || error instanceof ConfinedFileError) {
              refused[error.code] = (refused[error.code] ?? 0) + 1;
            } else {
              other.push(error instanceof Error ? error.message : String(error));
            }
          }
        }
      }
      const swaps = await swapper.stop();
      console.info(`[${pinning}] staged: ${written} ok, refused ${JSON.stringify(refused)}, swaps ${swaps}`);
      expect(swaps).toBeGreaterThan(1000);
      expect(outsideFilesContaining(f, 'PAYLOAD')).toEqual([]);
      const after = f.snapshotOutside();
      if (pinning === 'procfd') {
        expect(after).toEqual(before);
      } else {
        // The portable strategy's known gap (main/sandbox/README.md: no openat in Node): a NEW file created
        // while its parent is swapped can appear EMPTY in the folder the link pointed to. No byte of data is
        // written there and no existing file outside changes.
        const strays = addedOutside(before, after);
        expect(strays.filter((key) => !/^outside\/dir\/new-\d+\.txt$/.test(key))).toEqual([]);
        expect(strays.filter((key) => fs.statSync(path.join(f.base, key)).size !== 0)).toEqual([]);
        expect(changedOutside(before, after)).toEqual([]);
        console.info(`[portable] stray empty files outside: ${strays.length}`);
      }
      expect(written).toBeGreaterThan(0);
      expect(Object.values(refused).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      expect(other).toEqual([]);
    },
    RACE_TIMEOUT_MS,
  );
});
