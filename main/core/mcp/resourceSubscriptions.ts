import type { EventOf, SessionEvent } from '../../common/events.js';
import { McpResourceUpdated } from '../../common/mcpEvents.js';
import { READ_RESOURCE_TOOL } from '../../mcp/resources.js';
import type { McpSession } from '../../mcp/session.js';
import type { SessionLog } from '../log/sessionLog.js';

/*
 * Issue 33: MCP resource subscriptions. A session subscribes (where a server offers `resources/subscribe`) to
 * the resources it read (`read_mcp_resource`) or attached (`@mcp:server:uri`, recorded as an `<mcp-resource>`
 * block); an update a server sends is recorded as `mcp_resource_updated` (which the projection turns into a
 * note for the model and the app shows): during a turn as it arrives (the turn's `arrivals`), between turns
 * (servers kept by a pool) at the next turn's start.
 */

/** What a recorded update holds besides its seq and time. */
const RecordedUpdate = McpResourceUpdated.pick({ kind: true, server: true, uri: true });

/** Pure: the resources a session's events read or attached, each server/uri once, in order. */
export function resourcesReadIn(events: readonly SessionEvent[]): { server: string; uri: string }[] {
  const found = new Map<string, { server: string; uri: string }>();
  const add = (server: string, uri: string) => {
    if (server && uri) found.set(`${server}\n${uri}`, { server, uri });
  };
  const unquote = (text: string) =>
    text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
  for (const event of events) {
    if (event.kind === 'assistant_message') {
      // Read unvalidated (toolCalls may be absent); the model's arguments are untrusted JSON text.
      for (const call of event.toolCalls ?? []) {
        if (call.name !== READ_RESOURCE_TOOL) continue;
        try {
          const input = JSON.parse(call.arguments) as { server?: unknown; uri?: unknown };
          if (typeof input.server === 'string' && typeof input.uri === 'string') add(input.server, input.uri);
        } catch {
          // Not JSON: the call failed validation and read nothing.
        }
      }
    } else if (event.kind === 'user_message' && typeof event.content === 'string') {
      for (const match of event.content.matchAll(/<mcp-resource server="([^"]*)" uri="([^"]*)">/g))
        add(unquote(match[1] ?? ''), unquote(match[2] ?? ''));
    }
  }
  return [...found.values()];
}

/**
 * At a turn's start: records the updates the servers sent since the last turn (one event each), then
 * subscribes to every resource the session read or attached (a server without subscriptions, or one that
 * refuses, is passed over: an update is a courtesy, reading again is always possible).
 */
export async function followResourceUpdates(
  log: SessionLog,
  session: McpSession,
  onEvent?: (event: SessionEvent) => void,
): Promise<void> {
  for (const event of resourceArrivals(session).take()) {
    const result = log.append(event);
    if (result.ok) for (const appended of result.events) onEvent?.(appended);
  }
  const events = log.readKinds(['assistant_message', 'user_message'], { validate: false });
  await Promise.all(
    resourcesReadIn(events).map(({ server, uri }) => session.subscribe(server, uri).catch(() => false)),
  );
}

/**
 * A running turn's view of the session's resource updates (TurnHost.arrivals): each update as the
 * `mcp_resource_updated` to record, and a watch on their arrival.
 */
export function resourceArrivals(session: McpSession): {
  take: () => Omit<EventOf<'mcp_resource_updated'>, 'seq' | 'at'>[];
  watch: (arrived: () => void) => () => void;
} {
  return {
    // Only what the log takes (a uri past its bound, from an attachment, would fail the turn's append).
    take: () =>
      session
        .takeResourceUpdates()
        .map((update) => ({ kind: 'mcp_resource_updated' as const, ...update }))
        .filter((event) => RecordedUpdate.safeParse(event).success),
    watch: (arrived) => session.watchResourceUpdates(arrived),
  };
}
