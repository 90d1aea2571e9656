import { z } from 'zod';
import { appendJsonlEvent, readJsonlEvents } from './appendOnlyJsonl.js';

/**
 * `<home>/mcp-approvals.jsonl`: one event per line, appended when a person approves a project's `.mcp.json`
 * (by its sha256) or revokes that approval. A project's config is trusted while its newest event approves
 * exactly the hash the file has now: a changed file asks again. Nothing is ever rewritten.
 */
export const McpApprovalEvent = z.object({
  kind: z.enum(['mcp_config_approved', 'mcp_config_revoked']),
  /** Real path of the project folder. */
  project: z.string().min(1),
  /** sha256 (hex) of the `.mcp.json` bytes approved; empty for a revocation. */
  configHash: z.string(),
  /** The server names the approved file declared, for people reading the file. */
  servers: z.array(z.string()).default([]),
  /** Who approved: `keel mcp approve`, `keel mcp add`, the settings screen. */
  via: z.string().min(1),
  at: z.string().min(1),
});
export type McpApprovalEvent = z.infer<typeof McpApprovalEvent>;

const FILE = 'mcp-approvals.jsonl';

/** Appends one approval event (one `O_APPEND` line: concurrent writers never interleave). */
export function appendMcpApproval(
  home: string,
  event: Omit<z.input<typeof McpApprovalEvent>, 'at'>,
): McpApprovalEvent {
  return appendJsonlEvent(home, FILE, McpApprovalEvent, event);
}

/** Every approval event, oldest first; a line that is not a valid event is skipped (it approves nothing). */
export function readMcpApprovals(home: string): McpApprovalEvent[] {
  return readJsonlEvents(home, FILE, McpApprovalEvent);
}

/** The hash the project's newest approval event approves, or null (never approved, or revoked). Pure. */
export function approvedConfigHash(events: readonly McpApprovalEvent[], project: string): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as McpApprovalEvent;
    if (event.project !== project) continue;
    return event.kind === 'mcp_config_approved' ? event.configHash : null;
  }
  return null;
}
