import { lstat } from 'node:fs/promises';
import { showPath } from './areas.js';
import { protectionReason, readConfined, resolvePath, writeConfined } from './confine.js';
import { boundedDiff } from './diffText.js';
import type { EditFileArgs, WriteFileArgs } from './fileChangeSchemas.js';
import { toolLimits } from './limits.js';
import {
  describeError,
  errorOutcome,
  hashBytes,
  looksBinary,
  redactOutcome,
  truncateText,
  withPlan,
} from './outcome.js';
import { didYouMean, nearMatches } from './nearMatches.js';
import type { CallPreview, ExpectedImages, ToolContext, ToolOutcome } from './types.js';
import { ToolError } from './types.js';

/** The arguments of either file-changing tool; edit_file's carry old_string, write_file's content. */
export type FileChangeArgs = WriteFileArgs | EditFileArgs;

/** A computed change, not yet written: both images, their hashes and the diff between them. */
export interface FileChangePlan {
  /** The path as shown: relative to the root, or under an area's prefix. */
  path: string;
  /** Real path the change would land on (resolved inside the workspace). */
  realPath: string;
  before: Buffer | null;
  after: Buffer;
  preImageHash: string | null;
  postImageHash: string;
  diff: string;
  /** Lines added and removed, for the one-line summary the model sees. */
  added: number;
  removed: number;
}

function isEdit(args: FileChangeArgs): args is EditFileArgs {
  return 'old_string' in args;
}

/** Current bytes of the target, or null when it does not exist; refuses directories, special and huge files. */
export async function readCurrent(ctx: ToolContext, arg: string, realPath: string): Promise<Buffer | null> {
  const info = await lstat(realPath).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw err;
  });
  if (!info) return null;
  if (info.isDirectory()) throw new ToolError(`path: "${arg}" is a directory`);
  if (!info.isFile()) throw new ToolError(`path: "${arg}" is not a regular file`);
  if (info.size > toolLimits.fileMaxBytes) {
    throw new ToolError(
      `path: "${arg}" is too large to change with a tool (${info.size} bytes, limit ${toolLimits.fileMaxBytes})`,
    );
  }
  return (await readConfined(ctx, arg, toolLimits.fileMaxBytes)).data;
}

function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length))
    count++;
  return count;
}

/** Applies edit_file's replacement to text, or throws a ToolError saying exactly why it cannot. */
export function replaceInText(text: string, args: EditFileArgs, displayPath: string): string {
  if (args.old_string === args.new_string) {
    throw new ToolError('old_string and new_string are identical; there is nothing to change');
  }
  let oldString = args.old_string;
  let newString = args.new_string;
  let count = countOccurrences(text, oldString);
  // Models usually write \n; a CRLF file should still be editable without mixing line endings.
  if (count === 0 && text.includes('\r\n') && oldString.includes('\n') && !oldString.includes('\r\n')) {
    oldString = oldString.replace(/\n/g, '\r\n');
    newString = newString.replace(/\n/g, '\r\n');
    count = countOccurrences(text, oldString);
  }
  if (count === 0) {
    throw new ToolError(
      `old_string was not found in "${displayPath}"; read the file and copy the exact text, including whitespace`,
    );
  }
  if (count > 1 && args.replace_all !== true) {
    throw new ToolError(
      `old_string occurs ${count} times in "${displayPath}"; include more surrounding lines to make it unique, or set replace_all to true`,
    );
  }
  // split/join, not String.replace: "$&" or "$1" in new_string must stay literal.
  if (args.replace_all === true) return text.split(oldString).join(newString);
  const at = text.indexOf(oldString);
  return text.slice(0, at) + newString + text.slice(at + oldString.length);
}

/** Unified diff of a change (a/ b/ names, /dev/null for a new file), in bounded work, cut to the diff bound. */
export function diffImages(
  rel: string,
  before: Buffer | null,
  after: Buffer,
): { diff: string; added: number; removed: number } {
  if ((before && looksBinary(before)) || looksBinary(after)) {
    return { diff: `Binary file ${rel} ${before ? 'changed' : 'created'}\n`, added: 0, removed: 0 };
  }
  const {
    diff: patch,
    added,
    removed,
  } = boundedDiff(
    before ? `a/${rel}` : '/dev/null',
    `b/${rel}`,
    before ? before.toString('utf8') : '',
    after.toString('utf8'),
  );
  const cut = truncateText(patch, toolLimits.diffMaxChars);
  return {
    diff: cut.truncated ? `${cut.text}\n[diff cut at ${toolLimits.diffMaxChars} characters]\n` : patch,
    added,
    removed,
  };
}

/** Computes what write_file or edit_file would do, without writing; throws a ToolError if it cannot. */
export async function planChange(args: FileChangeArgs, ctx: ToolContext): Promise<FileChangePlan> {
  const realPath = resolvePath(ctx, args.path, 'path', true);
  const rel = showPath(ctx, realPath);
  const before = await readCurrent(ctx, args.path, realPath);
  let after: Buffer;
  if (isEdit(args)) {
    if (!before) {
      const near = didYouMean(await nearMatches(ctx, args.path, 'file'));
      throw new ToolError(
        `path: "${args.path}" does not exist${near === '' ? '; use write_file to create a file' : `${near} (use write_file to create a file)`}`,
      );
    }
    if (looksBinary(before))
      throw new ToolError(`path: "${rel}" is a binary file; edit_file changes text files only`);
    after = Buffer.from(replaceInText(before.toString('utf8'), args, rel), 'utf8');
  } else {
    after = Buffer.from(args.content, 'utf8');
    if (after.length > toolLimits.writeMaxBytes) {
      throw new ToolError(
        `content: ${after.length} bytes is more than write_file accepts (${toolLimits.writeMaxBytes})`,
      );
    }
  }
  const { diff, added, removed } = diffImages(rel, before, after);
  return {
    path: rel,
    realPath,
    before,
    after,
    preImageHash: before ? hashBytes(before) : null,
    postImageHash: hashBytes(after),
    diff,
    added,
    removed,
  };
}

function planFields(plan: FileChangePlan): Partial<ToolOutcome> {
  return {
    path: plan.path,
    preImageHash: plan.preImageHash,
    postImageHash: plan.postImageHash,
    diff: plan.diff,
  };
}

/** Writes a planned change unless the path is protected and the call is not approved. */
async function applyPlan(plan: FileChangePlan, args: FileChangeArgs, ctx: ToolContext): Promise<ToolOutcome> {
  if (!ctx.approved) {
    const reason = protectionReason(ctx, plan.realPath);
    if (reason !== null) {
      return errorOutcome(`approval required: ${reason}; the change was not made`, {
        ...planFields(plan),
        approvalRequired: reason,
      });
    }
  }
  await writeConfined(ctx, args.path, plan.after, plan.realPath);
  const verb = plan.before === null ? 'Created' : 'Updated';
  const lines = plan.after.length === 0 ? 0 : plan.after.toString('utf8').split('\n').length;
  const summary =
    plan.before === null
      ? `${verb} ${plan.path} (${lines} lines, ${plan.after.length} bytes)`
      : `${verb} ${plan.path} (+${plan.added} -${plan.removed} lines)`;
  return { content: summary, isError: false, ...planFields(plan) };
}

/** Executes write_file or edit_file: plan, protection check, confined write; outcome carries hashes and diff. */
export async function executeFileChange(args: FileChangeArgs, ctx: ToolContext): Promise<ToolOutcome> {
  const plan = await planChange(args, ctx);
  if (plan.preImageHash === plan.postImageHash) {
    return {
      content: `${plan.path} already has this content; nothing was written`,
      isError: false,
      ...planFields(plan),
    };
  }
  return applyPlan(plan, args, ctx);
}

/**
 * What a write_file/edit_file call WOULD do, as the approval gate takes it, planned once: the path as the
 * grant subject, the protection reason, the diff, the images to record and the plan itself (which
 * `applyEditOnce` writes). A call that cannot apply gives its tool error. Writes nothing; never throws;
 * redacted.
 */
export async function previewFileChange(args: FileChangeArgs, ctx: ToolContext): Promise<CallPreview> {
  try {
    const plan = await planChange(args, ctx);
    const reason = protectionReason(ctx, plan.realPath);
    return withPlan(
      {
        ok: true,
        subject: { path: plan.path },
        protectedReason: reason === null ? null : ctx.redactor.redact(reason),
        ...(plan.diff ? { diff: ctx.redactor.redact(plan.diff) } : {}),
        images: { preImageHash: plan.preImageHash, postImageHash: plan.postImageHash },
      },
      plan,
    );
  } catch (err) {
    return { ok: false, outcome: redactOutcome(errorOutcome(describeError(err)), ctx) };
  }
}

/**
 * Re-applies a recorded write_file/edit_file after a crash, at most once: the file already has the
 * post-image → nothing written, `alreadyApplied`; it has the pre-image (null = absent) → applied;
 * anything else → `conflict`, nothing written. Never throws. Redacted.
 */
export async function applyEditOnce(
  args: FileChangeArgs,
  ctx: ToolContext,
  expected: ExpectedImages,
  planned?: unknown,
): Promise<ToolOutcome> {
  try {
    // The call's first run: its preview's plan, just made for these images; the write confines it again.
    const given = planned as FileChangePlan | undefined;
    const fresh =
      given !== undefined &&
      given.preImageHash === expected.preImageHash &&
      given.postImageHash === expected.postImageHash;
    const realPath = fresh ? given.realPath : resolvePath(ctx, args.path, 'path', true);
    const rel = fresh ? given.path : showPath(ctx, realPath);
    const currentHash = fresh
      ? given.preImageHash
      : await readCurrent(ctx, args.path, realPath).then((bytes) => (bytes ? hashBytes(bytes) : null));
    const hashes = { path: rel, preImageHash: expected.preImageHash, postImageHash: expected.postImageHash };
    if (currentHash === expected.postImageHash) {
      return redactOutcome(
        {
          content: `already applied: ${rel} already has the expected content`,
          isError: false,
          alreadyApplied: true,
          ...hashes,
        },
        ctx,
      );
    }
    if (currentHash !== expected.preImageHash) {
      return redactOutcome(
        errorOutcome(
          `conflict: ${rel} changed since this edit was planned (it has neither the recorded pre-image nor the post-image); the edit was not applied`,
          { conflict: true, ...hashes },
        ),
        ctx,
      );
    }
    const plan = fresh ? given : await planChange(args, ctx);
    if (plan.postImageHash !== expected.postImageHash || plan.preImageHash !== expected.preImageHash) {
      return redactOutcome(
        errorOutcome(
          `conflict: re-applying the edit to ${rel} would not give the recorded post-image; not applied`,
          {
            conflict: true,
            ...hashes,
          },
        ),
        ctx,
      );
    }
    return redactOutcome(await applyPlan(plan, args, ctx), ctx);
  } catch (err) {
    return redactOutcome(errorOutcome(describeError(err)), ctx);
  }
}
