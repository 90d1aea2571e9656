import { requiresApprovalForEveryCommand } from '../sandbox/box.js';
import { protectionReason, resolvePath } from './confine.js';
import type { FileChangeArgs } from './fileChange.js';
import type { ToolContext, ToolModule } from './types.js';

/**
 * Why the box requires the user's approval for this call whatever the policy, or null: a file
 * change landing on a protected path (.git, .keel, .vscode, the user's globs...), or a command
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
  if (name === 'run_command' && requiresApprovalForEveryCommand(ctx.sandbox)) {
    return `no OS sandbox can confine commands on this machine (${ctx.sandbox.reason}); the command would run unconfined`;
  }
  return null;
}
