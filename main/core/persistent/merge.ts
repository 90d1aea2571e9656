// What a commit does with each file the session changed, given the backing folder's version now: write
// it, delete it, nothing (already there), a three-way merge, or a conflict. See README.md.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isZeroOid, runGit, type TreeChange } from './git.js';
import type { Entry } from './hashing.js';
import { backingSide, plain, type CheckoutContext } from './state.js';
import { lstatOrUndefined } from './streamWrite.js';

/** One change of a commit and what to do with it; `before` is the backing entry the decision was made on. */
export type PlannedWrite =
  | { change: TreeChange; before: Entry; kind: 'write' | 'delete' | 'already' }
  | { change: TreeChange; before: Entry; kind: 'merged'; content: Buffer };

/**
 * Decides each change against `theirs` (the backing entries now, in the same order): unchanged since the
 * baseline → write or delete; identical to the session's → already; changed on both sides → merged, or a
 * conflict. A write whose folder is now a file in the backing folder is a conflict too (it would fail
 * half-way). Merges run one at a time.
 */
export async function planWrites(
  context: CheckoutContext,
  changes: readonly TreeChange[],
  theirs: readonly Entry[],
): Promise<{ plan: PlannedWrite[]; conflicts: string[] }> {
  const plan: PlannedWrite[] = [];
  const conflicts: string[] = [];
  for (const [index, change] of changes.entries()) {
    const backingNow = theirs[index] as Entry;
    const ours = sideOf(change.newMode, change.newOid);
    const base = sideOf(change.oldMode, change.oldOid);
    const before = backingNow;
    if (sameEntry(backingNow, base))
      plan.push({ change, before, kind: change.status === 'D' ? 'delete' : 'write' });
    else if (sameEntry(backingNow, ours)) plan.push({ change, before, kind: 'already' });
    else {
      const merged = await merge(context, change, backingNow);
      if (merged === undefined) conflicts.push(change.path);
      else plan.push({ change, before, kind: 'merged', content: merged });
    }
  }
  for (const write of plan) {
    if ((write.kind === 'write' || write.kind === 'merged') && blockedByFile(context, write.change.path)) {
      conflicts.push(write.change.path);
    }
  }
  return { plan, conflicts };
}

function sideOf(mode: string, oid: string): Entry {
  if (isZeroOid(oid)) return { kind: 'none' };
  return { kind: mode === '120000' ? 'link' : 'file', oid };
}

/** Same kind and content (a changed executable bit alone does not count as a change by the other side). */
function sameEntry(a: Entry, b: Entry): boolean {
  if (a.kind === 'file' || a.kind === 'link') return b.kind === a.kind && b.oid === a.oid;
  return a.kind === 'none' && b.kind === 'none';
}

/** Three-way merge of a file both sides modified; the merged bytes, or undefined on a conflict or binary data. */
async function merge(context: CheckoutContext, ours: TreeChange, theirs: Entry): Promise<Buffer | undefined> {
  const regular = (mode: string) => mode === '100644' || mode === '100755';
  if (ours.status !== 'M' || theirs.kind !== 'file' || !regular(ours.oldMode) || !regular(ours.newMode)) {
    return undefined;
  }
  const temp = path.join(context.location.stateDir, `merge-${randomBytes(6).toString('hex')}`);
  fs.mkdirSync(temp);
  try {
    const contents = {
      ours: (await runGit(backingSide(context), ['cat-file', 'blob', ours.newOid])).stdout,
      base: (await runGit(backingSide(context), ['cat-file', 'blob', ours.oldOid])).stdout,
      theirs: fs.readFileSync(path.join(context.state.backing, ours.path)),
    };
    for (const [name, data] of Object.entries(contents)) {
      if (data.subarray(0, 8000).includes(0)) return undefined;
      fs.writeFileSync(path.join(temp, name), data);
    }
    const { stdout, code } = await runGit(plain(temp), ['merge-file', '-p', '-q', 'ours', 'base', 'theirs'], {
      okCodes: Array.from({ length: 127 }, (_, i) => i + 1),
    });
    return code === 0 ? stdout : undefined;
  } finally {
    fs.rmSync(temp, { recursive: true, force: true });
  }
}

/** True when a parent of `relative` in the backing folder is now a file: writing it would fail half-way. */
function blockedByFile(context: CheckoutContext, relative: string): boolean {
  let parent = path.dirname(relative);
  while (parent !== '.' && parent !== '') {
    const stat = lstatOrUndefined(path.join(context.state.backing, parent));
    if (stat && !stat.isDirectory()) return true;
    parent = path.dirname(parent);
  }
  return false;
}
