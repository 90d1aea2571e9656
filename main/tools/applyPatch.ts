import { z } from 'zod';
import { removeConfined, writeConfined } from './confine.js';
import { readCurrent } from './fileChange.js';
import { describeError, errorOutcome, hashBytes, redactOutcome, withPlan } from './outcome.js';
import { fileSetHash, imagesOf, planPatch, type PatchFilePlan, type PatchPlan } from './patchPlan.js';
import { resolvePath } from './confine.js';
import type {
  CallPreview,
  ExpectedImages,
  FileImages,
  ToolContext,
  ToolModule,
  ToolOutcome,
} from './types.js';
import { ToolError } from './types.js';

// apply_patch: OpenAI's Codex patch format (grammar in patchParse.ts), several files in one call, all or
// nothing. Planned in memory first (patchPlan.ts), then written through the confined writer; a write that
// fails midway puts back the files already written from their pre-images, so no partial change remains.

/** apply_patch's arguments: the patch text, as Codex's apply_patch tool takes it. */
export const applyPatchParameters = z.strictObject({
  input: z
    .string()
    .min(1, 'must hold the patch, from "*** Begin Patch" to "*** End Patch"')
    .describe('The whole patch, from "*** Begin Patch" to "*** End Patch".'),
});

/** apply_patch arguments after validation. */
export type ApplyPatchArgs = z.infer<typeof applyPatchParameters>;

const DESCRIPTION = [
  'Edit files with a patch: add, update (with optional rename) and delete several files in one call, applied all or nothing.',
  'Format:',
  '*** Begin Patch',
  '*** Add File: <path>        then every line of the new file, each prefixed with +',
  '*** Update File: <path>     optionally followed by *** Move to: <new path>',
  '@@ <optional line to find first, e.g. a class or function header>',
  ' <context line>  (a space, then the line)',
  '-<removed line>',
  '+<added line>',
  '*** End of File             optional: the hunk ends the file',
  '*** Delete File: <path>',
  '*** End Patch',
  'In each hunk give 3 lines of context before and after the change, copied exactly; use @@ headers to say where when that is not unique. Several hunks per file go in file order.',
  'Paths are relative to the project root (or /session/... where the workspace has it).',
  'Example:',
  '*** Begin Patch',
  '*** Update File: src/app.py',
  '@@ def greet():',
  '-    print("Hi")',
  '+    print("Hello, world!")',
  '*** Add File: docs/hello.md',
  '+# Hello',
  '*** End Patch',
].join('\n');

/** How one planned file reads in the summary: A(dded), M(odified), D(eleted), R(enamed). */
function summaryLine(file: PatchFilePlan): string | undefined {
  const counts = `(+${file.added} -${file.removed})`;
  if (file.movedTo !== undefined) return undefined;
  if (file.fromPath !== undefined) return `R ${file.fromPath} -> ${file.path} ${counts}`;
  if (file.after === null) return `D ${file.path}`;
  if (file.before === null) return `A ${file.path} ${counts}`;
  return `M ${file.path} ${counts}`;
}

function summaryOf(plan: PatchPlan): string {
  const lines = plan.files.map(summaryLine).filter((line): line is string => line !== undefined);
  const moved = plan.files.filter(
    (file) => file.movedTo !== undefined && !plan.files.some((f) => f.fromPath === file.path),
  );
  for (const file of moved) lines.push(`D ${file.path} (moved to ${file.movedTo ?? ''})`);
  return `Applied the patch to ${plan.files.length} file${plan.files.length === 1 ? '' : 's'}:\n${lines.join('\n')}`;
}

/** Why the plan needs approval, naming each protected file; null when none is protected. */
function protectionOf(plan: PatchPlan): string | null {
  const protectedFiles = plan.files.filter((file) => file.protectedReason !== null);
  if (protectedFiles.length === 0) return null;
  return protectedFiles.map((file) => `${file.path}: ${file.protectedReason ?? ''}`).join('; ');
}

/** Puts files back to their pre-images, newest first; returns the paths that could not be restored. */
async function rollBack(written: readonly PatchFilePlan[], ctx: ToolContext): Promise<string[]> {
  const failed: string[] = [];
  for (const file of [...written].reverse()) {
    try {
      if (file.before === null) removeConfined(ctx, file.arg, file.realPath);
      else await writeConfined(ctx, file.arg, file.before, file.realPath);
    } catch {
      failed.push(file.path);
    }
  }
  return failed;
}

/**
 * Writes a plan: new contents first, removals last (a file is never gone before its replacement exists).
 * If one step fails, the files already changed get their pre-images back and a ToolError says what
 * happened. `beforeEach` is for tests that need to change the disk between steps.
 */
export async function writePlan(
  plan: PatchPlan,
  ctx: ToolContext,
  beforeEach?: (file: PatchFilePlan) => void | Promise<void>,
): Promise<void> {
  const order = [
    ...plan.files.filter((f) => f.after !== null),
    ...plan.files.filter((f) => f.after === null),
  ];
  const written: PatchFilePlan[] = [];
  for (const file of order) {
    try {
      await beforeEach?.(file);
      if (file.after === null) removeConfined(ctx, file.arg, file.realPath);
      else await writeConfined(ctx, file.arg, file.after, file.realPath);
      written.push(file);
    } catch (error) {
      const failed = await rollBack(written, ctx);
      const undone =
        written.length === 0
          ? 'nothing was changed'
          : failed.length === 0
            ? `the ${written.length} file${written.length === 1 ? '' : 's'} already written ${written.length === 1 ? 'was' : 'were'} restored; nothing was changed`
            : `restoring ${failed.join(', ')} failed too: check ${failed.length === 1 ? 'it' : 'them'}`;
      throw new ToolError(`${file.path}: ${describeError(error)}; ${undone}`);
    }
  }
}

/** Plans, checks protection, writes: the whole apply_patch call. Throws ToolError; not redacted. */
async function applyPlanned(plan: PatchPlan, ctx: ToolContext): Promise<ToolOutcome> {
  if (plan.files.length === 0) {
    return {
      content: 'The patch changes nothing: every file already has this content.',
      isError: false,
      diff: '',
    };
  }
  if (!ctx.approved) {
    const reason = protectionOf(plan);
    if (reason !== null) {
      return errorOutcome(`approval required: ${reason}; the patch was not applied`, {
        diff: plan.diff,
        approvalRequired: reason,
      });
    }
  }
  await writePlan(plan, ctx);
  return { content: summaryOf(plan), isError: false, diff: plan.diff };
}

/** A failure as the model reads it: a ToolError whole (a hunk's lines follow its first line), else one line. */
function failureOf(err: unknown): ToolOutcome {
  return errorOutcome(err instanceof ToolError ? err.message : describeError(err));
}

/** Executes apply_patch (no recorded images): plan, protection check, confined writes with rollback. */
async function executeApplyPatch(args: ApplyPatchArgs, ctx: ToolContext): Promise<ToolOutcome> {
  try {
    return await applyPlanned(await planPatch(args.input, ctx), ctx);
  } catch (err) {
    return failureOf(err);
  }
}

/** The images tool_call_started records for a plan: each file's, and the set's as the two hashes. */
function expectedImages(plan: PatchPlan): ExpectedImages {
  const files = imagesOf(plan);
  return { preImageHash: fileSetHash(files, 'pre'), postImageHash: fileSetHash(files, 'post'), files };
}

/** The approval gate's view: every path as the subject, the protected ones, the combined diff, the images. */
async function previewApplyPatch(args: ApplyPatchArgs, ctx: ToolContext): Promise<CallPreview> {
  try {
    const plan = await planPatch(args.input, ctx);
    const reason = protectionOf(plan);
    const paths = [...new Set(plan.files.map((file) => file.path))];
    return withPlan(
      {
        ok: true,
        subject: { paths },
        protectedReason: reason === null ? null : ctx.redactor.redact(reason),
        diff: ctx.redactor.redact(plan.diff),
        images: expectedImages(plan),
      },
      plan,
    );
  } catch (err) {
    return { ok: false, outcome: redactOutcome(failureOf(err), ctx) };
  }
}

/** Each recorded file's hash now (null: absent). */
async function currentHashes(files: readonly FileImages[], ctx: ToolContext): Promise<(string | null)[]> {
  const hashes: (string | null)[] = [];
  for (const file of files) {
    const realPath = resolvePath(ctx, file.path, 'path', true);
    const bytes = await readCurrent(ctx, file.path, realPath);
    hashes.push(bytes === null ? null : hashBytes(bytes));
  }
  return hashes;
}

/** True when two lists of file images name the same files with the same hashes, in the same order. */
function sameImages(planned: readonly FileImages[], files: readonly FileImages[]): boolean {
  return (
    planned.length === files.length &&
    planned.every(
      (file, i) =>
        file.path === files[i]?.path &&
        file.preImageHash === files[i]?.preImageHash &&
        file.postImageHash === files[i]?.postImageHash,
    )
  );
}

/**
 * Applies an apply_patch call at most once by its recorded images (also how its first run applies): every
 * file already at its post-image → `alreadyApplied`, nothing written; every file at its pre-image → the
 * patch is planned again and applied if it gives exactly the recorded post-images; any other mix →
 * `conflict` naming the files, nothing written. Never throws. Redacted.
 */
async function applyPatchOnce(
  args: ApplyPatchArgs,
  ctx: ToolContext,
  expected: ExpectedImages,
  planned?: unknown,
): Promise<ToolOutcome> {
  try {
    // The call's first run: its preview's plan, just made for these images; each write confines it again.
    const given = planned as PatchPlan | undefined;
    if (given !== undefined && sameImages(imagesOf(given), expected.files ?? [])) {
      return redactOutcome(await applyPlanned(given, ctx), ctx);
    }
    const files = expected.files;
    if (files === undefined || files.length === 0) {
      return redactOutcome(
        errorOutcome(
          'conflict: this apply_patch call has no recorded file images, so it cannot be applied safely',
          {
            conflict: true,
          },
        ),
        ctx,
      );
    }
    const now = await currentHashes(files, ctx);
    if (files.every((file, i) => now[i] === file.postImageHash)) {
      return redactOutcome(
        {
          content: `already applied: ${files.map((f) => f.path).join(', ')} already ${files.length === 1 ? 'has' : 'have'} the patched content`,
          isError: false,
          alreadyApplied: true,
        },
        ctx,
      );
    }
    const other = files.filter((file, i) => now[i] !== file.preImageHash);
    if (other.length > 0) {
      const applied = other.filter((file) => now[files.indexOf(file)] === file.postImageHash);
      const changed = other.filter((file) => !applied.includes(file));
      const parts = [
        ...(applied.length > 0 ? [`already patched: ${applied.map((f) => f.path).join(', ')}`] : []),
        ...(changed.length > 0
          ? [`changed since the patch was planned: ${changed.map((f) => f.path).join(', ')}`]
          : []),
      ];
      return redactOutcome(
        errorOutcome(
          `conflict: the files are neither all as before the patch nor all as after it (${parts.join('; ')}); nothing was written`,
          {
            conflict: true,
          },
        ),
        ctx,
      );
    }
    const plan = await planPatch(args.input, ctx);
    if (!sameImages(imagesOf(plan), files)) {
      return redactOutcome(
        errorOutcome(
          'conflict: applying the patch again would not give the recorded files; nothing was written',
          {
            conflict: true,
          },
        ),
        ctx,
      );
    }
    return redactOutcome(await applyPlanned(plan, ctx), ctx);
  } catch (err) {
    return redactOutcome(failureOf(err), ctx);
  }
}

/**
 * apply_patch: the patch format OpenAI's models are trained on. Each path is confined like write_file's;
 * protected paths need approval; the approval shows one diff of every file; resume applies it at most once.
 */
export const applyPatchTool: ToolModule<typeof applyPatchParameters> = {
  name: 'apply_patch',
  description: DESCRIPTION,
  parameters: applyPatchParameters,
  mode: 'write',
  kind: 'edit',
  execute: executeApplyPatch,
  preview: previewApplyPatch,
  resume: { rule: 'recorded_images', applyOnce: applyPatchOnce },
};
