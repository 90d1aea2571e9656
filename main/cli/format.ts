import type { SessionEvent, ToolCall } from '../common/events.js';
import { clip } from '../common/text.js';
import type { CommitReport } from '../core/harness/index.js';

/** A path shortened from the left to at most `max` characters, so its most specific part stays visible. */
export function clipLeft(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max + 1)}`;
}

/** Rows laid out in columns (each as wide as its widest cell), separated by two spaces; no trailing spaces. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows];
  const widths = header.map((_, column) => Math.max(...all.map((row) => [...(row[column] ?? '')].length)));
  return all
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One line for one event: seq (right-aligned to `seqWidth`), kind, and a short summary. */
export function formatEventLine(event: SessionEvent, seqWidth: number): string {
  return `${String(event.seq).padStart(seqWidth)}  ${event.kind.padEnd(18)} ${summarizeEvent(event)}`.trimEnd();
}

/** A short, single-line description of one event for `keel show`. */
export function summarizeEvent(event: SessionEvent): string {
  switch (event.kind) {
    case 'session_created':
      return [
        event.title === undefined ? undefined : quote(event.title, 50),
        `${event.provider}:${event.model}`,
        `window ${event.contextWindow}`,
        `${event.toolMode}, policy ${event.policy}`,
        `project ${event.projectFolder}`,
        event.parentId === undefined ? undefined : `child of ${event.parentId}`,
        event.forkedFrom === undefined
          ? undefined
          : `fork of ${event.forkedFrom.sessionId} at ${event.forkedFrom.seq}`,
      ]
        .filter((part) => part !== undefined)
        .join(', ');
    case 'user_message':
      return event.command === undefined
        ? quote(event.content, 100)
        : `/${event.command.name} ${quote(event.command.arguments, 60)} (${event.command.shown})`;
    case 'assistant_message':
      return joinParts(
        event.content === '' ? undefined : quote(event.content, 80),
        formatCalls(event.toolCalls),
      );
    case 'interrupted':
      return joinParts(
        `partial ${quote(event.content, 70)}`,
        formatCalls(event.toolCalls),
        event.reason === undefined ? undefined : `(${event.reason})`,
      );
    case 'tool_call_started':
      return `${event.tool} ${event.toolCallId}, key ${event.idempotencyKey}`;
    case 'tool_result':
      return joinParts(
        `${event.tool ?? 'result'} ${event.toolCallId}${event.isError ? ' (error)' : ''}:`,
        quote(event.content, 70),
        event.exitCode === undefined || event.exitCode === null ? undefined : `exit ${event.exitCode}`,
        event.artifact === undefined ? undefined : `artifact ${event.artifact}`,
      );
    case 'approval_request':
      return joinParts(
        event.reason === undefined
          ? `${event.tool} ${event.toolCallId} ${clip(event.arguments, 60)}`
          : `${event.tool} ${event.toolCallId}: ${clip(event.reason, 60)}`,
        event.unknownOutcome ? '(outcome unknown after a restart)' : undefined,
      );
    case 'approval_granted':
      return `request ${event.requestSeq}, scope ${event.scope}`;
    case 'approval_denied':
      return `request ${event.requestSeq}${event.reason === undefined ? '' : `: ${quote(event.reason, 60)}`}`;
    case 'approval_revoked':
      return `grant ${event.grantSeq}${event.reason === undefined ? '' : `: ${quote(event.reason, 60)}`}`;
    case 'compaction':
      return joinParts(
        `replaces ${event.fromSeq ?? 1}..${event.through}`,
        event.supersedes === undefined ? undefined : `(re-run of ${event.supersedes})`,
        quote(event.summary, 70),
      );
    case 'file_staged':
      return `${event.path} (${event.size} bytes${event.mediaType === undefined ? '' : `, ${event.mediaType}`})`;
    case 'persistent_commit':
      return `${event.dir}: ${event.files.length} file${event.files.length === 1 ? '' : 's'}`;
    case 'changes_reverted':
      return `${event.dir}: ${event.files.length} file${event.files.length === 1 ? '' : 's'} put back (reverts ${event.reverts.join(', ')}${event.turn === undefined ? '' : `, turn ${event.turn}`})`;
    case 'user_snapshot':
      return `${event.dir}: your work kept before Keel wrote (${event.reason}): ${event.files.length} file${event.files.length === 1 ? '' : 's'}${event.omitted ? `, ${event.omitted} more not kept` : ''} (keel snapshots SESSION --restore ${event.seq})`;
    case 'user_snapshot_restored':
      return `${event.dir}: snapshot ${event.snapshotSeq} restored: ${event.files.length} file${event.files.length === 1 ? '' : 's'} written back`;
    case 'rewound':
      if (event.cause === 'refusal')
        return 'the provider declined the turn before this: it is left out of the conversation (its rows stay here), so the next request is not declined too';
      return `the conversation continues from ${event.toSeq}; the events after it are set aside${event.revertedSeq === undefined ? '' : ` (files reverted: ${event.revertedSeq})`}`;
    case 'subagent_started':
      return `child ${event.childId}${event.agent ? ` (agent ${event.agent.name})` : ''}: ${quote(event.task, 70)}`;
    case 'subagent_result':
      return joinParts(
        `child ${event.childId}:`,
        quote(event.content, 70),
        event.outOfBudget ? '(out of budget)' : undefined,
      );
    case 'model_changed':
      return `${event.provider}:${event.model}, window ${event.contextWindow}`;
    case 'reasoning_changed':
      return `reasoning ${event.effort}`;
    case 'policy_changed':
      return `policy ${event.policy}`;
    case 'session_renamed':
      return `title ${quote(event.title, 60)}`;
    case 'instructions_loaded':
      return event.files.length === 0
        ? 'none (the instruction files were removed)'
        : event.files.map((file) => `${file.path}${file.truncated ? ' (cut)' : ''}`).join(', ');
    case 'mcp_tools_listed':
      return joinParts(
        event.servers.length === 0
          ? 'no MCP servers'
          : event.servers
              .map(
                (server) =>
                  `${server.name} ${server.state === 'ready' ? `${server.tools.length} tools` : 'failed'}`,
              )
              .join(', '),
        event.project?.status === 'untrusted' ? "(the project's .mcp.json is not approved)" : undefined,
      );
    case 'tool_rules_applied':
      return event.tools.length === 0
        ? 'no tool rules in effect'
        : `run without asking: ${event.tools.join(', ')}`;
    case 'permission_rules_applied':
      return event.rules.length === 0
        ? 'no permission rules in effect'
        : `permission rules: ${event.rules.map((rule) => `${rule.action} ${rule.rule} (${rule.source})`).join('; ')}`;
    case 'mcp_resource_updated':
      return `MCP resource ${event.uri} (${event.server}) changed on its server`;
    case 'mcp_config_trusted':
      return `.mcp.json ${event.configHash.slice(0, 12)} trusted (${event.servers.join(', ')}; approved ${event.approvedAt} via ${event.via})`;
    case 'budget_set':
      return joinParts(
        event.usd === undefined ? undefined : event.usd === null ? 'no USD cap' : `USD cap $${event.usd}`,
        event.tokens === undefined
          ? undefined
          : event.tokens === null
            ? 'no token cap'
            : `token cap ${event.tokens}`,
        event.source === undefined ? undefined : `(${event.source})`,
      );
    case 'budget_reached':
      return clip(event.message, 160);
    case 'custom_listed':
      return joinParts(
        `skills: ${event.skills.map((skill) => skill.name).join(', ') || 'none'};`,
        `agents: ${event.agents.map((agent) => agent.name).join(', ') || 'none'}`,
        event.problems?.length ? `(${event.problems.length} file(s) ignored)` : undefined,
      );
    case 'hook_ran':
      return joinParts(
        `${event.event} hook (${event.source}): ${event.decision}`,
        event.exitCode === null ? (event.timedOut ? 'timed out' : undefined) : `exit ${event.exitCode}`,
        `${event.durationMs} ms`,
        event.reason === undefined ? undefined : `— ${clip(event.reason, 100)}`,
        event.stop ? `ended the turn: ${clip(event.stopReason ?? 'no reason given', 100)}` : undefined,
      );
    case 'plan_mode_changed':
      return event.active ? 'plan mode on: the model reads and presents a plan' : 'plan mode off';
    case 'plan_approved':
      return `plan of request ${event.requestSeq} approved; policy ${event.policy}`;
    case 'plan_rejected':
      return `plan of request ${event.requestSeq} sent back: ${quote(event.comments, 70)}`;
    case 'background_started':
      return `${event.handle} started in the background: ${quote(event.command, 80)} (output: ${event.artifact})`;
    case 'background_output':
      return `${event.handle} output read (characters ${event.from}-${event.to})`;
    case 'background_exited':
      return joinParts(
        `${event.handle} ended (${event.reason.replace('_', ' ')})`,
        event.exitCode === undefined || event.exitCode === null ? undefined : `exit ${event.exitCode}`,
        event.signal ? `by ${event.signal}` : undefined,
      );
    case 'error':
      return joinParts(event.code === undefined ? undefined : `[${event.code}]`, clip(event.message, 100));
  }
}

function formatCalls(calls: readonly ToolCall[]): string | undefined {
  if (calls.length === 0) return undefined;
  return `→ ${calls.map((call) => `${call.name}(${clip(call.arguments, 40)}) ${call.id}`).join(', ')}`;
}

function quote(text: string, max: number): string {
  return JSON.stringify(clip(text, max));
}

function joinParts(...parts: (string | undefined)[]): string {
  return parts.filter((part) => part !== undefined && part !== '').join(' ');
}

/** One line for the terminal about one Persistent Dir commit (what reached the folder, or the conflict). */
export function describeCommit(report: CommitReport): string {
  switch (report.status) {
    case 'unchanged':
      return `keel: nothing to commit in ${report.dir}`;
    case 'committed': {
      const merged = report.files.filter((f) => f.merged).length;
      return (
        `keel: committed ${report.files.length} file${report.files.length === 1 ? '' : 's'} to ${report.dir}` +
        (merged > 0 ? ` (${merged} merged with changes made there meanwhile)` : '') +
        ` (diff: artifact ${report.diffArtifact})`
      );
    }
    case 'conflict':
      return (
        `keel: nothing committed to ${report.dir}: ${report.conflicts.join(', ')} changed there too and cannot be merged; ` +
        `the session's version is kept in artifact ${report.patchArtifact}`
      );
  }
}
