import path from 'node:path';
import { allowedScopes, fetchHostOf, toolKindOf } from '../approvals/decide.js';
import { suggestPrefix } from '../approvals/grants.js';
import { checkDecision } from '../approvals/state.js';
import type { EventOf, SessionEvent } from '../../common/events.js';
import type { ApprovalPreview, CommandPreview, FileChangePreview } from '../../common/harnessViews.js';
import { describeError } from './describeError.js';
import { HarnessError } from './errors.js';
import { shellStartFolder, type SessionBox } from './box.js';
import { applyPatchParameters } from '../../tools/applyPatch.js';
import {
  planChange,
  previewFileChange,
  type FileChangeArgs,
  type FileChangePlan,
} from '../../tools/fileChange.js';
import { planPatch, type PatchFilePlan } from '../../tools/patchPlan.js';
import { toolLimits } from '../../tools/limits.js';
import { looksBinary } from '../../tools/outcome.js';
import { createToolRegistry } from '../../tools/registry.js';
import { resolvePath as resolveToolPath } from '../../tools/confine.js';
import { showPath } from '../../tools/areas.js';
import { type ToolContext } from '../../tools/types.js';

/** Largest text given per side of a file preview; bigger files get the diff only. */
export const PREVIEW_MAX_CHARS = 4 * 1024 * 1024;

/** The pending request `requestSeq` of `events`, or the error a person can act on. */
export function findPendingRequest(
  events: readonly SessionEvent[],
  requestSeq: number,
): EventOf<'approval_request'> {
  // The same check a decision makes: decided, not a request, or one an imported file left open.
  const checked = checkDecision(events, requestSeq);
  if (checked.ok) return checked.request;
  const exists = events.some((event) => event.kind === 'approval_request' && event.seq === requestSeq);
  throw new HarnessError(exists ? 'invalid_state' : 'not_found', checked.error);
}

/**
 * Everything the approval panel shows about one pending request: its arguments (redacted, as logged), why it
 * asks, which scopes a decision may take with pre-filled suggestions, and for a file change the original and
 * proposed text computed now (what previewFileChange would write; redacted like the diff), or for a command its
 * working directory, limits and box. Reads only.
 */
export async function previewApproval(
  events: readonly SessionEvent[],
  requestSeq: number,
  box: SessionBox,
): Promise<ApprovalPreview> {
  const request = findPendingRequest(events, requestSeq);
  const logged = parseObject(request.arguments);
  // The log keeps the arguments redacted; the exact change is computed from the model's own call.
  const raw = parseObject(rawArgumentsOf(events, request) ?? request.arguments) ?? logged;
  // The tools' own context, as a turn builds it (box.tools): the preview plans the call exactly as the tool would.
  const ctx: ToolContext = { ...box.tools, idempotencyKey: 'approval-preview' };
  const preview: ApprovalPreview = {
    request,
    arguments: logged,
    protectedReason: null,
    allowedScopes: allowedScopes(request),
    suggested: {},
  };
  const kind = toolKindOf(request.tool);
  if (request.tool === 'apply_patch') {
    const patch = await previewPatch(request, raw, ctx);
    preview.files = patch.files;
    preview.protectedReason = patch.protectedReason;
    const suggested = commonFolderGlob(patch.files.map((file) => file.path));
    if (suggested !== undefined) preview.suggested.path = suggested;
  } else if (kind === 'edit') {
    const file = await previewFile(request, raw, ctx);
    preview.file = file.preview;
    preview.protectedReason = file.protectedReason;
    const target = file.preview.path;
    if (target !== '') {
      const folder = path.posix.dirname(target);
      preview.suggested.path = folder === '.' ? `path:${target}` : `path:${folder}/**`;
    }
  } else if (request.tool === 'web_fetch') {
    const host = fetchHostOf(request.arguments);
    if (host !== undefined) preview.suggested.domain = `domain:${host}`;
  } else if (kind === 'command') {
    preview.command = previewCommand(logged, raw, box, ctx);
    const prefix = suggestPrefix(preview.command.command);
    if (prefix) preview.suggested.prefix = `prefix:${prefix}`;
  }
  return preview;
}

/** The arguments of the model's call the request answers, as the assistant message recorded them. */
function rawArgumentsOf(
  events: readonly SessionEvent[],
  request: EventOf<'approval_request'>,
): string | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index];
    if (!event || event.seq > request.seq || event.kind !== 'assistant_message') continue;
    const call = event.toolCalls.find((candidate) => candidate.id === request.toolCallId);
    if (call) return call.arguments;
  }
  return undefined;
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text.trim() === '' ? '{}' : text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

async function previewFile(
  request: EventOf<'approval_request'>,
  raw: Record<string, unknown> | null,
  ctx: ToolContext,
): Promise<{ preview: FileChangePreview; protectedReason: string | null }> {
  const failedAt = (error: string, target = ''): { preview: FileChangePreview; protectedReason: null } => ({
    preview: failed(error, target),
    protectedReason: null,
  });
  const tool = createToolRegistry('write').get(request.tool);
  const parsed = tool?.parameters.safeParse(raw ?? {});
  if (!parsed?.success) return failedAt(`the call's arguments are not valid for ${request.tool}`);
  const args = parsed.data as FileChangeArgs;
  const planned = await previewFileChange(args, ctx);
  const outcome = planned.ok
    ? {
        isError: false,
        content: '',
        path: planned.subject.path,
        diff: planned.diff,
        approvalRequired: planned.protectedReason ?? undefined,
      }
    : planned.outcome;
  if (outcome.isError) return failedAt(ctx.redactor.redact(errorText(outcome.content)), args.path);
  const target = outcome.path ?? args.path;
  let original: string | null = null;
  let proposed: string | null = null;
  let binary = false;
  let tooLarge = false;
  try {
    // The preview's own plan (withPlan): planning again would read and confine the file a second time.
    const plan =
      (planned.ok ? (planned as { plan?: FileChangePlan }).plan : undefined) ?? (await planChange(args, ctx));
    binary = (plan.before !== null && looksBinary(plan.before)) || looksBinary(plan.after);
    // A UTF-8 byte is at most one UTF-16 unit, so a side under the limit in bytes is under it in characters.
    tooLarge = Math.max(plan.before?.length ?? 0, plan.after.length) > PREVIEW_MAX_CHARS;
    if (!binary && !tooLarge) {
      original = plan.before === null ? null : ctx.redactor.redact(plan.before.toString('utf8'));
      proposed = ctx.redactor.redact(plan.after.toString('utf8'));
    }
  } catch (error) {
    return failedAt(ctx.redactor.redact(describeError(error).message), target);
  }
  const diff = outcome.diff ?? '';
  return {
    preview: {
      path: target,
      original,
      proposed,
      diff,
      binary,
      tooLarge,
      changedSinceRequest: request.diff !== undefined && request.diff !== diff,
    },
    protectedReason: outcome.approvalRequired ?? null,
  };
}

/** `path:<folder>/**` for the deepest folder holding every path (`path:<file>` for one file), or undefined at the root. */
function commonFolderGlob(paths: readonly string[]): string | undefined {
  const [first, ...rest] = paths;
  if (first === undefined) return undefined;
  if (rest.length === 0) {
    const folder = path.posix.dirname(first);
    return folder === '.' ? `path:${first}` : `path:${folder}/**`;
  }
  let common = path.posix.dirname(first).split('/');
  for (const other of rest) {
    const parts = path.posix.dirname(other).split('/');
    let same = 0;
    while (same < common.length && same < parts.length && common[same] === parts[same]) same++;
    common = common.slice(0, same);
  }
  const folder = common.join('/');
  // A glob over the whole root (or across areas) is no narrower than "for this session": suggest none.
  return folder === '' || folder === '.' ? undefined : `path:${folder}/**`;
}

/** Each file of an apply_patch call, as the approval panel shows it: both texts (redacted) and its diff. */
async function previewPatch(
  request: EventOf<'approval_request'>,
  raw: Record<string, unknown> | null,
  ctx: ToolContext,
): Promise<{ files: FileChangePreview[]; protectedReason: string | null }> {
  const parsed = applyPatchParameters.safeParse(raw ?? {});
  if (!parsed.success) {
    return {
      files: [failed(`the call's arguments are not valid for ${request.tool}`)],
      protectedReason: null,
    };
  }
  let files: PatchFilePlan[];
  try {
    files = (await planPatch(parsed.data.input, ctx)).files;
  } catch (error) {
    return { files: [failed(ctx.redactor.redact(describeError(error).message))], protectedReason: null };
  }
  const reasons = files
    .filter((file) => file.protectedReason !== null)
    .map((file) => `${file.path}: ${file.protectedReason ?? ''}`);
  const byPath = new Map(files.map((file) => [file.path, file]));
  return {
    // A file moved to a new one is shown once, as its destination's rename diff.
    files: files
      .filter((file) => !(file.movedTo !== undefined && file.diff === ''))
      .map((file) => {
        const source = file.fromPath !== undefined ? byPath.get(file.fromPath) : undefined;
        return filePreview(file, source?.before ?? file.before, request, ctx);
      }),
    protectedReason: reasons.length === 0 ? null : ctx.redactor.redact(reasons.join('; ')),
  };
}

/** A file preview for a call that cannot apply (at `target`, when known): its error in place of a diff. */
function failed(error: string, target = ''): FileChangePreview {
  return {
    path: target,
    original: null,
    proposed: null,
    diff: error,
    binary: false,
    tooLarge: false,
    error,
    changedSinceRequest: false,
  };
}

/** One file of a patch; `before` is what the diff shows on the left (a moved file's source). */
function filePreview(
  file: PatchFilePlan,
  before: Buffer | null,
  request: EventOf<'approval_request'>,
  ctx: ToolContext,
): FileChangePreview {
  const binary = (before !== null && looksBinary(before)) || (file.after !== null && looksBinary(file.after));
  const tooLarge = Math.max(before?.length ?? 0, file.after?.length ?? 0) > PREVIEW_MAX_CHARS;
  const texts = !binary && !tooLarge;
  const diff = ctx.redactor.redact(file.diff);
  const change =
    file.movedTo !== undefined
      ? 'deleted'
      : file.fromPath !== undefined
        ? 'moved'
        : file.after === null
          ? 'deleted'
          : file.before === null
            ? 'added'
            : 'modified';
  return {
    path: file.path,
    original: texts && before !== null ? ctx.redactor.redact(before.toString('utf8')) : null,
    // A deleted file's text after the call is empty, so the diff editor shows every line removed.
    proposed: texts ? ctx.redactor.redact(file.after === null ? '' : file.after.toString('utf8')) : null,
    diff,
    binary,
    tooLarge,
    changedSinceRequest: request.diff !== undefined && diff !== '' && !request.diff.includes(diff),
    change,
    ...(file.fromPath !== undefined ? { fromPath: file.fromPath } : {}),
  };
}

function errorText(content: string): string {
  const parsed = parseObject(content);
  return typeof parsed?.['error'] === 'string' ? parsed['error'] : content;
}

function previewCommand(
  logged: Record<string, unknown> | null,
  raw: Record<string, unknown> | null,
  box: SessionBox,
  ctx: ToolContext,
): CommandPreview {
  // The command that would run is the call's own (redacted as the log would be), never the request's text.
  const command =
    typeof raw?.['command'] === 'string'
      ? ctx.redactor.redact(raw['command'])
      : typeof logged?.['command'] === 'string'
        ? logged['command']
        : '';
  const asked = raw?.['timeout_ms'];
  const requested =
    typeof asked === 'number' && Number.isInteger(asked) && asked > 0 ? Math.floor(asked) : undefined;
  const timeoutMs = Math.min(requested ?? toolLimits.commandDefaultTimeoutMs, toolLimits.commandMaxTimeoutMs);
  // The call's cwd as run_command resolves it, else where it starts by default (the project).
  const named = typeof raw?.['cwd'] === 'string' && raw['cwd'] !== '' ? raw['cwd'] : undefined;
  const cwdPath = named !== undefined ? commandFolderOf(ctx, named) : shellStartFolder(box);
  return {
    command,
    cwd: named ?? showPath(ctx, cwdPath),
    cwdPath,
    timeoutMs,
    ...(requested !== undefined ? { requestedTimeoutMs: requested } : {}),
    timeoutCapped: requested !== undefined && requested > timeoutMs,
    memoryMb: toolLimits.commandMemoryMb,
    sandbox: { kind: box.sandbox.kind, reason: box.sandbox.reason },
    networkAllow: box.networkAllow,
    writable: box.writable,
    readOnly: box.readOnly,
    hidden: box.hidden,
  };
}

/** Where run_command would run for this `cwd`; one that it would refuse is shown where it points. */
function commandFolderOf(ctx: ToolContext, named: string): string {
  try {
    return resolveToolPath(ctx, named, 'cwd');
  } catch {
    return path.resolve(ctx.workspace, named);
  }
}
