import type { Policy, ToolMode } from '../../common/events.js';
import type { ToolKind } from '../../tools/types.js';

/** What a tool does, as far as approval is concerned (the tool's own description says it). */
export type { ToolKind };

/** A policy's answer for one call before grants are consulted. */
export type PolicyDecision =
  { action: 'allow' } | { action: 'ask'; reason: string } | { action: 'deny'; reason: string };

export type PolicyInput = {
  policy: Policy;
  kind: ToolKind;
  /** Why the target path is protected (.git, .keel, .vscode, a user glob), when it is. */
  protectedReason?: string | null;
  /** False when no OS sandbox can start on this machine: then every command asks. */
  sandboxAvailable: boolean;
};

/**
 * Decides whether a call may run without asking. Pure. read-only: only reads; ask: reads run, everything
 * else asks; auto-edit: reads and edits inside the workspace run, commands ask; full-auto: everything inside
 * the box runs. In every policy a protected path asks, and without an OS sandbox every command asks.
 */
export function evaluatePolicy(input: PolicyInput): PolicyDecision {
  const { policy, kind } = input;
  if (kind === 'read') return { action: 'allow' };
  if (policy === 'read-only') {
    if (kind === 'subagent') return { action: 'allow' };
    return { action: 'deny', reason: 'this session is read-only' };
  }
  if (input.protectedReason) return { action: 'ask', reason: input.protectedReason };
  if (kind === 'command' && !input.sandboxAvailable) {
    return {
      action: 'ask',
      reason: 'no OS sandbox is available on this machine, so every command needs approval',
    };
  }
  if (kind === 'subagent') return { action: 'allow' };
  if (policy === 'full-auto') return { action: 'allow' };
  if (policy === 'auto-edit' && kind === 'edit') return { action: 'allow' };
  return {
    action: 'ask',
    reason: kind === 'edit' ? 'edits need approval in this policy' : 'commands need approval in this policy',
  };
}

/**
 * The tool set a new session gets: a read-only policy always means the read-only registry (its model never
 * sees a write tool); otherwise the one asked for (write by default).
 */
export function toolModeFor(policy: Policy, requested: ToolMode = 'write'): ToolMode {
  return policy === 'read-only' ? 'read-only' : requested;
}

/**
 * Whether a session may move to `policy`: one created with the read-only tool set has no write tools, so
 * only read-only applies. Returns why not, or undefined.
 */
export function policyChangeProblem(toolMode: ToolMode, policy: Policy): string | undefined {
  return toolMode === 'read-only' && policy !== 'read-only'
    ? 'this session was created read-only: its tool set has no write tools; start a new session to write'
    : undefined;
}

/**
 * Issue #30: what plan mode refuses, or undefined for a call it lets through to the policy. Pure. Plan mode
 * runs the built-in reads only: no edit, no command (whether a command changes nothing is not something
 * Keel can prove: a prefix grant's rules say what it covers, not that it is harmless), no subagent (its
 * child would write under the session's policy), no MCP tool (a server's readOnlyHint is its own word, and
 * a call reaches a program outside the box). present_plan (`plan`) is the gate's own case.
 */
export function planModeRefusal(tool: { name: string; kind: ToolKind }): string | undefined {
  if (tool.kind === 'plan') return undefined;
  if (tool.kind === 'read' && !tool.name.startsWith('mcp__')) return undefined;
  return (
    `plan mode: ${tool.name} is not available until the user approves your plan. Read what you need ` +
    '(read_file, grep, glob, list_dir), then call present_plan with the plan; nothing is changed before that'
  );
}
