import { z } from 'zod';
import { eventBase } from './eventBase.js';

// The MCP event kinds (which servers and tools a turn had, the project's tool rules, the .mcp.json trust used),
// kept out of events.ts, which imports them into its union and re-exports them.

const { base } = eventBase;

/** One MCP server of a session as a turn found it (main/mcp). */
export const McpServerListed = z.object({
  name: z.string().min(1),
  source: z.enum(['settings', 'project']),
  transport: z.enum(['stdio', 'http']),
  state: z.enum(['ready', 'failed']),
  /** Why it failed, and the tail of its stderr. */
  error: z.string().optional(),
  stderrTail: z.string().optional(),
  /** Registry names of its tools (`mcp__<server>__<tool>`). */
  tools: z.array(z.string()),
});

/**
 * The MCP servers and tools a turn's tool list holds, appended when a turn starts and they differ from the
 * newest such event (a server's tools/list_changed takes effect so, at the next turn). `project` says what
 * became of the project's `.mcp.json`: `untrusted` servers were not started (its hash is not approved).
 */
export const McpToolsListed = z.object({
  ...base,
  kind: z.literal('mcp_tools_listed'),
  servers: z.array(McpServerListed),
  project: z
    .object({
      status: z.enum(['trusted', 'untrusted', 'invalid']),
      hash: z.string().optional(),
      servers: z.array(z.string()).optional(),
      error: z.string().optional(),
    })
    .optional(),
  /**
   * Kept servers whose tools changed since the previous turn: they said tools/list_changed, or the turn start's
   * tools/list found another list (a notice over HTTP can be lost).
   */
  changedBy: z.array(z.string()).optional(),
  /** Tools a server listed that Keel could not offer, one sentence each. */
  skipped: z.array(z.string()).optional(),
});

/**
 * The project's tool rules (a grant with scope `tool`, kept in `<home>/tool-rules.jsonl`) a turn found in
 * effect, appended when they differ from the newest such event: from here on these tools run without asking,
 * and a `tool` grant of this session whose tool is not listed is no longer in effect (its rule was revoked).
 */
export const ToolRulesApplied = z.object({
  ...base,
  kind: z.literal('tool_rules_applied'),
  /** Real path of the project folder the rules are kept for. */
  project: z.string().min(1),
  tools: z.array(z.string().min(1)),
});

/**
 * The trust decision a session used for its project's `.mcp.json`: appended when a turn starts the file's
 * servers under an approval and the newest such event names another hash (or there is none). The
 * cross-session record stays `<home>/mcp-approvals.jsonl`; this says, in the log alone, which servers were
 * trusted from which bytes. Never sent to a provider; an imported one trusts nothing here.
 */
export const McpConfigTrusted = z.object({
  ...base,
  kind: z.literal('mcp_config_trusted'),
  /** Real path of the project folder the approval names. */
  project: z.string().min(1),
  /** sha256 (hex) of the `.mcp.json` bytes approved and started. */
  configHash: z.string().min(1),
  servers: z.array(z.string()),
  /** The approval used: when and through what it was given (`keel mcp approve`, the settings screen). */
  approvedAt: z.string().min(1),
  via: z.string().min(1),
});

/**
 * Issue 33: a resource this session read or attached changed on its server (`notifications/resources/updated`
 * for a `resources/subscribe` the session made). Recorded as it arrives during a turn (one arriving while a reply
 * streams: after that reply), else at the next turn's start; the model is told at its next request (a user-role
 * note: what it read may be stale), the app shows it.
 */
export const McpResourceUpdated = z.object({
  ...base,
  kind: z.literal('mcp_resource_updated'),
  server: z.string().min(1),
  uri: z.string().min(1).max(2048),
});
