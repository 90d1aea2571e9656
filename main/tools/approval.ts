import { requiresApprovalForEveryCommand } from '../sandbox/box.js';
import { protectionReason, resolvePath } from './confine.js';
import type { FileChangeArgs } from './fileChange.js';
import { parsePatch } from './patchParse.js';
import type { ToolContext, ToolModule } from './types.js';

/**
 * Why the box requires the user's approval for this call whatever the policy, or null: a file
 * change (any path of an apply_patch) landing on a protected path (.git, .keel, .vscode, the user's globs...), or a command
 * when no OS sandbox can confine it. Policy (ask, auto-edit...) is the approval gate's business;
 * this reports only what the box itself insists on. Never throws.
 */
export function needsApproval(tool: ToolModule | string, args: unknown, ctx: ToolContext): string | null {
  const name = typeof tool === 'string' ? tool : tool.name;
  if (name === 'write_file' || name === 'edit_file') {
    try {
      const real = resolvePath(ctx, (args as FileChangeArgs).path, 'path', true);
      return protectionReason(ctx, real);
    } catch {
      // A path that cannot be resolved fails as a tool error when run; there is nothing to approve.
      return null;
    }
  }
  if (name === 'apply_patch') return patchProtection(args, ctx);
  if (name === 'run_command' && requiresApprovalForEveryCommand(ctx.sandbox)) {
    return `no OS sandbox can confine commands on this machine (${ctx.sandbox.reason}); the command would run unconfined`;
  }
  return null;
}

/** The protected paths an apply_patch call names (every section's path and move target), or null. */
function patchProtection(args: unknown, ctx: ToolContext): string | null {
  try {
    const input = (args as { input?: unknown }).input;
    if (typeof input !== 'string') return null;
    const reasons: string[] = [];
    for (const op of parsePatch(input)) {
      const named: [string, string][] = [[op.path, 'path']];
      if (op.kind === 'update' && op.moveTo !== null) named.push([op.moveTo, 'Move to']);
      for (const [arg, argName] of named) {
        const reason = protectionReason(ctx, resolvePath(ctx, arg, argName, true));
        if (reason !== null) reasons.push(`${arg}: ${reason}`);
      }
    }
    return reasons.length === 0 ? null : reasons.join('; ');
  } catch {
    // A patch that does not parse or names an escaping path fails as a tool error when run.
    return null;
  }
}
