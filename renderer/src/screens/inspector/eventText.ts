import type { SessionEvent } from '../../api/types.js';

/** How a replaced event reads in the inspector: who or what, and its text. */
export type EventLine = {
  who: string;
  tone: 'user' | 'assistant' | 'tool' | 'approval' | 'other';
  text: string;
};

/** Characters of one event shown before it is expanded. */
const PREVIEW = 2_000;

/**
 * One event of the log as the compaction inspector lists it, close to how the summarizer saw it
 * (`#seq who: text`): messages with their text, tool calls and results with their name and content,
 * decisions with their scope or reason. Texts are capped at `max` characters. Pure.
 */
export function describeEvent(event: SessionEvent, max = PREVIEW): EventLine {
  const clip = (text: string) =>
    text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
  switch (event.kind) {
    case 'user_message':
      return {
        who: event.command ? `User (/${event.command.name})` : 'User',
        tone: 'user',
        text: clip(event.content),
      };
    case 'assistant_message': {
      const calls = event.toolCalls.map((call) => `→ ${call.name}(${call.arguments})`);
      return {
        who: 'Assistant',
        tone: 'assistant',
        text: clip([event.content, ...calls].filter(Boolean).join('\n')),
      };
    }
    case 'interrupted':
      return { who: 'Assistant (interrupted)', tone: 'assistant', text: clip(event.content) };
    case 'tool_call_started':
      return { who: `Tool ${event.tool}`, tone: 'tool', text: `started (${event.toolCallId})` };
    case 'tool_result':
      return {
        who: `Result ${event.tool ?? event.toolCallId}`,
        tone: 'tool',
        text: clip(`${event.isError ? '[error] ' : ''}${event.content}`),
      };
    case 'approval_request':
      return {
        who: `Approval asked: ${event.tool}`,
        tone: 'approval',
        text: clip(event.reason ?? event.arguments),
      };
    case 'approval_granted':
      return {
        who: 'Approved',
        tone: 'approval',
        text: `request #${event.requestSeq}, scope ${event.scope}`,
      };
    case 'approval_denied':
      return {
        who: 'Denied',
        tone: 'approval',
        text: `request #${event.requestSeq}${event.reason ? `: ${clip(event.reason)}` : ''}`,
      };
    case 'approval_revoked':
      return {
        who: 'Grant revoked',
        tone: 'approval',
        text: `grant #${event.grantSeq}${event.reason ? `: ${event.reason}` : ''}`,
      };
    case 'compaction':
      return {
        who: 'Compaction',
        tone: 'other',
        text: `summary of #${event.fromSeq ?? '?'}–#${event.through}`,
      };
    case 'subagent_started':
      return {
        who: event.agent ? `Subagent started (agent ${event.agent.name})` : 'Subagent started',
        tone: 'tool',
        text: clip(event.task),
      };
    case 'subagent_result':
      return { who: 'Subagent result', tone: 'tool', text: clip(event.content) };
    case 'file_staged':
      return { who: 'File staged', tone: 'other', text: `${event.path} (${event.size} bytes)` };
    case 'persistent_commit':
      return {
        who: 'Committed',
        tone: 'other',
        text: `${event.dir}: ${event.files.map((file) => file.path).join(', ')}`,
      };
    case 'changes_reverted':
      return {
        who: 'Reverted',
        tone: 'other',
        text: `${event.dir}: ${event.files.map((file) => file.path).join(', ')} (reverts ${event.reverts.join(', ')})`,
      };
    case 'user_snapshot':
      return {
        who: 'Your work kept',
        tone: 'other',
        text: `${event.dir} (${event.reason}): ${event.files.map((file) => file.path).join(', ')}`,
      };
    case 'user_snapshot_restored':
      return {
        who: 'Snapshot restored',
        tone: 'other',
        text: `${event.dir}: ${event.files.map((file) => file.path).join(', ')} (snapshot ${event.snapshotSeq})`,
      };
    case 'rewound':
      return { who: 'Rewound', tone: 'other', text: `the conversation continues from event ${event.toSeq}` };
    case 'model_changed':
      return { who: 'Model switched', tone: 'other', text: `${event.provider}:${event.model}` };
    case 'reasoning_changed':
      return { who: 'Reasoning changed', tone: 'other', text: event.effort };
    case 'policy_changed':
      return { who: 'Policy changed', tone: 'other', text: event.policy };
    case 'plan_mode_changed':
      return { who: 'Plan mode', tone: 'other', text: event.active ? 'on' : 'off' };
    case 'plan_approved':
      return { who: 'Plan approved', tone: 'other', text: `policy ${event.policy}` };
    case 'plan_rejected':
      return { who: 'Plan sent back', tone: 'user', text: event.comments };
    case 'session_renamed':
      return { who: 'Renamed', tone: 'other', text: event.title };
    case 'instructions_loaded':
      return {
        who: 'Instructions',
        tone: 'other',
        text: event.files.length === 0 ? 'none' : event.files.map((file) => file.path).join(', '),
      };
    case 'mcp_tools_listed':
      return {
        who: 'MCP',
        tone: 'other',
        text:
          event.servers
            .map(
              (server) =>
                `${server.name}: ${server.state === 'ready' ? server.tools.join(', ') || 'no tools' : `failed (${server.error ?? ''})`}`,
            )
            .join('\n') || 'no servers',
      };
    case 'permission_rules_applied':
      return {
        who: 'Permission rules',
        tone: 'other',
        text:
          event.rules.length === 0
            ? 'none in effect'
            : event.rules.map((rule) => `${rule.action} ${rule.rule} (${rule.source})`).join('\n'),
      };
    case 'tool_rules_applied':
      return {
        who: 'Tool rules',
        tone: 'other',
        text: event.tools.length === 0 ? 'none in effect' : `run without asking: ${event.tools.join(', ')}`,
      };
    case 'mcp_resource_updated':
      return {
        who: 'MCP resource',
        tone: 'other',
        text: `${event.uri} (${event.server}) changed on its server`,
      };
    case 'mcp_config_trusted':
      return {
        who: 'MCP trust',
        tone: 'other',
        text: `.mcp.json ${event.configHash.slice(0, 12)} (${event.servers.join(', ')}), approved ${event.approvedAt}`,
      };
    case 'custom_listed':
      return {
        who: 'Skills and agents',
        tone: 'other',
        text: `skills: ${event.skills.map((skill) => skill.name).join(', ') || 'none'}; agents: ${event.agents.map((agent) => agent.name).join(', ') || 'none'}`,
      };
    case 'hook_ran':
      return {
        who: `${event.event} hook`,
        tone: 'other',
        text: clip(
          `${event.source}: ${event.decision}${event.reason ? ` — ${event.reason}` : ''}` +
            (event.stop ? `; ended the turn: ${event.stopReason ?? 'no reason given'}` : ''),
        ),
      };
    case 'session_created':
      return { who: 'Session created', tone: 'other', text: `${event.provider}:${event.model}` };
    case 'budget_set':
      return {
        who: 'Spend cap',
        tone: 'other',
        text: [
          event.usd === undefined ? '' : event.usd === null ? 'no USD cap' : `USD ${event.usd}`,
          event.tokens === undefined ? '' : event.tokens === null ? 'no token cap' : `${event.tokens} tokens`,
        ]
          .filter(Boolean)
          .join(', '),
      };
    case 'budget_reached':
      return { who: 'Spend cap reached', tone: 'other', text: clip(event.message) };
    case 'background_started':
      return {
        who: 'Background command',
        tone: 'other',
        text: `${event.handle} started: ${clip(event.command)}`,
      };
    case 'background_output':
      return {
        who: 'Background output',
        tone: 'other',
        text: `${event.handle}: characters ${event.from}-${event.to} read`,
      };
    case 'background_exited':
      return {
        who: 'Background command',
        tone: 'other',
        text: `${event.handle} ended (${event.reason.replace('_', ' ')})${event.exitCode === undefined || event.exitCode === null ? '' : `, exit ${event.exitCode}`}`,
      };
    case 'error':
      return { who: 'Error', tone: 'other', text: clip(event.message) };
  }
}
