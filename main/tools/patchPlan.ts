import { showPath } from './areas.js';
import { protectionReason, resolvePath } from './confine.js';
import { boundedDiff, type TextDiff } from './diffText.js';
import { readCurrent } from './fileChange.js';
import { toolLimits } from './limits.js';
import { didYouMean, nearMatches } from './nearMatches.js';
import { hashBytes, looksBinary, truncateText } from './outcome.js';
import { parsePatch, type PatchOp } from './patchParse.js';
import { applyChunks, SearchBudget } from './patchText.js';
import type { FileImages, ToolContext } from './types.js';
import { ToolError } from './types.js';

// What an apply_patch call would do, computed before anything is written: every path confined like a
// write_file path, every file read once, every section applied in patch order to the files as the earlier
// sections left them (in memory), and the result per file: both images, their hashes, the diff. A section
// that cannot apply fails the whole plan, so nothing is written.

/** One file the patch changes: where it lands, its bytes before and after (null = absent). */
export interface PatchFilePlan {
  /** As shown: root-relative, or under an area's prefix. */
  path: string;
  /** The model's own spelling of the path, through which the file is written or removed. */
  arg: string;
  /** Real path (resolved and confined); writes are pinned to it. */
  realPath: string;
  before: Buffer | null;
  after: Buffer | null;
  preImageHash: string | null;
  postImageHash: string | null;
  /** Moved here from this file (as shown). */
  fromPath?: string;
  /** Moved away to this file (as shown). */
  movedTo?: string;
  /** Why writing it needs approval (.git, a protected glob, a read-only Persistent Dir), or null. */
  protectedReason: string | null;
  /** This file's part of the combined diff ('' for a file moved away: its destination's diff shows the move). */
  diff: string;
  added: number;
  removed: number;
}

/** The whole change of one apply_patch call. */
export interface PatchPlan {
  /** The files that change, in the order the patch first names them. */
  files: PatchFilePlan[];
  /** One unified diff of every file (a/ b/ names, /dev/null for added and deleted files), cut to its bound. */
  diff: string;
}

/** Hash of a set of file images: what tool_call_started records as the whole change's pre- or post-image. */
export function fileSetHash(files: readonly FileImages[], side: 'pre' | 'post'): string {
  return hashBytes(
    JSON.stringify(files.map((f) => [f.path, side === 'pre' ? f.preImageHash : f.postImageHash])),
  );
}

/** The recorded images of a plan's files. */
export function imagesOf(plan: PatchPlan): FileImages[] {
  return plan.files.map((file) => ({
    path: file.path,
    preImageHash: file.preImageHash,
    postImageHash: file.postImageHash,
    ...(file.fromPath !== undefined ? { fromPath: file.fromPath } : {}),
  }));
}

/** A file as the sections so far left it; `current` is what the next section sees. */
interface Tracked {
  path: string;
  arg: string;
  realPath: string;
  before: Buffer | null;
  current: Buffer | null;
  fromPath?: string;
  movedTo?: string;
}

const HEADER: Record<PatchOp['kind'], string> = {
  add: 'Add File',
  delete: 'Delete File',
  update: 'Update File',
};

/** Reads and confines the files of a patch once each, keyed by real path (two spellings, one file). */
class Files {
  private readonly byReal = new Map<string, Tracked>();
  constructor(private readonly ctx: ToolContext) {}

  async get(arg: string, argName: string): Promise<Tracked> {
    const realPath = resolvePath(this.ctx, arg, argName, true);
    const known = this.byReal.get(realPath);
    if (known) return known;
    if (this.byReal.size >= toolLimits.patchMaxFiles) {
      throw new ToolError(
        `the patch names more than ${toolLimits.patchMaxFiles} files; split it into smaller patches`,
      );
    }
    const before = await readCurrent(this.ctx, arg, realPath);
    const tracked: Tracked = { path: showPath(this.ctx, realPath), arg, realPath, before, current: before };
    this.byReal.set(realPath, tracked);
    return tracked;
  }

  all(): Tracked[] {
    return [...this.byReal.values()];
  }
}

/** The text of a file a section changes; absent and binary files cannot be updated. */
async function textOf(file: Tracked, op: PatchOp, ctx: ToolContext): Promise<string> {
  if (file.current === null) {
    const near = file.before === null ? didYouMean(await nearMatches(ctx, op.path, 'file')) : '';
    throw new ToolError(
      `${HEADER[op.kind]}: "${op.path}" (patch line ${op.line}) does not exist${near}${op.kind === 'update' ? "; use '*** Add File:' to create a file" : ''}`,
    );
  }
  if (looksBinary(file.current)) {
    throw new ToolError(
      `${HEADER[op.kind]}: "${file.path}" is a binary file; apply_patch changes text files only`,
    );
  }
  return file.current.toString('utf8');
}

async function applyOp(op: PatchOp, files: Files, ctx: ToolContext, budget: SearchBudget): Promise<void> {
  const file = await files.get(op.path, HEADER[op.kind]);
  if (op.kind === 'add') {
    const bytes = Buffer.from(op.contents, 'utf8');
    if (bytes.length > toolLimits.writeMaxBytes) {
      throw new ToolError(
        `Add File: "${op.path}" is ${bytes.length} bytes, more than apply_patch writes (${toolLimits.writeMaxBytes})`,
      );
    }
    file.current = bytes;
    return;
  }
  if (op.kind === 'delete') {
    await textOrBytes(file, op, ctx);
    file.current = null;
    return;
  }
  const after = Buffer.from(
    await applyChunks(await textOf(file, op, ctx), op.chunks, file.path, budget),
    'utf8',
  );
  if (op.moveTo === null) {
    file.current = after;
    return;
  }
  const target = await files.get(op.moveTo, 'Move to');
  if (target === file) {
    file.current = after;
    return;
  }
  target.current = after;
  if (target.before === null && target.fromPath === undefined) target.fromPath = file.path;
  file.current = null;
  file.movedTo = target.path;
}

/** A file Delete File removes must exist (binary files may be deleted). */
async function textOrBytes(file: Tracked, op: PatchOp, ctx: ToolContext): Promise<void> {
  if (file.current !== null) return;
  const near = file.before === null ? didYouMean(await nearMatches(ctx, op.path, 'file')) : '';
  throw new ToolError(`Delete File: "${op.path}" (patch line ${op.line}) does not exist${near}`);
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

/** One file's unified diff, `from` naming the old side (a moved file's source). */
function fileDiff(
  from: { name: string; bytes: Buffer | null },
  to: { name: string; bytes: Buffer | null },
): TextDiff {
  if ((from.bytes && looksBinary(from.bytes)) || (to.bytes && looksBinary(to.bytes))) {
    const verb = to.bytes === null ? 'deleted' : from.bytes === null ? 'created' : 'changed';
    const diff = `Binary file ${to.bytes === null ? from.name : to.name} ${verb}\n`;
    return { diff, added: 0, removed: 0 };
  }
  return boundedDiff(
    from.bytes === null ? '/dev/null' : `a/${from.name}`,
    to.bytes === null ? '/dev/null' : `b/${to.name}`,
    from.bytes === null ? '' : from.bytes.toString('utf8'),
    to.bytes === null ? '' : to.bytes.toString('utf8'),
  );
}

/** A diff cut to the bound outcomes keep, with a marker saying so. */
function cutDiff(diff: string): string {
  const cut = truncateText(diff, toolLimits.diffMaxChars);
  return cut.truncated ? `${cut.text}\n[diff cut at ${toolLimits.diffMaxChars} characters]\n` : diff;
}

/**
 * Plans an apply_patch call: parses `input`, confines and reads every file, applies every section in memory.
 * Throws a ToolError (naming the line, the file, the hunk) when the patch cannot apply; writes nothing.
 */
export async function planPatch(input: string, ctx: ToolContext): Promise<PatchPlan> {
  if (input.length > toolLimits.patchMaxChars) {
    throw new ToolError(
      `the patch is ${input.length} characters, more than apply_patch takes (${toolLimits.patchMaxChars}); split it`,
    );
  }
  const ops = parsePatch(input);
  const files = new Files(ctx);
  // One budget for every section: a patch naming one big file many times is bounded like one long hunk.
  const budget = new SearchBudget(toolLimits.patchSearchMaxWork, ctx.signal);
  for (const op of ops) await applyOp(op, files, ctx, budget);
  const changed = files.all().filter((file) => !sameBytes(file.before, file.current));
  const byPath = new Map(changed.map((file) => [file.path, file]));
  const parts: string[] = [];
  const planned = changed.map((file): PatchFilePlan => {
    const source =
      file.fromPath !== undefined && file.before === null ? byPath.get(file.fromPath) : undefined;
    const destination = file.movedTo !== undefined ? byPath.get(file.movedTo) : undefined;
    // A move to a new file shows as one rename diff (on the destination); the source's deletion is part of it.
    const shownWithMove =
      file.current === null && destination?.fromPath === file.path && destination.before === null;
    const { diff, ...counts } = shownWithMove
      ? { diff: '', added: 0, removed: 0 }
      : fileDiff(
          { name: source ? source.path : file.path, bytes: source ? source.before : file.before },
          { name: file.path, bytes: file.current },
        );
    parts.push(diff);
    return {
      path: file.path,
      arg: file.arg,
      realPath: file.realPath,
      before: file.before,
      after: file.current,
      preImageHash: file.before === null ? null : hashBytes(file.before),
      postImageHash: file.current === null ? null : hashBytes(file.current),
      ...(source ? { fromPath: source.path } : {}),
      ...(file.movedTo !== undefined && file.current === null ? { movedTo: file.movedTo } : {}),
      protectedReason: protectionReason(ctx, file.realPath),
      diff: cutDiff(diff),
      ...counts,
    };
  });
  return {
    files: planned,
    diff: cutDiff(parts.join('')),
  };
}
