import { storedMcpAuth } from './auth.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { EventOf, SessionEvent } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { planMcpServers, readProjectMcpConfig, PROJECT_CONFIG_FILE } from '../../mcp/config.js';
import type { McpSession } from '../../mcp/session.js';
import { redactMcpSession } from '../../mcp/redactListing.js';
import { startMcpSession } from '../../mcp/start.js';
import type { NetworkPolicy, SandboxInfo } from '../../sandbox/box.js';
import { approvedConfigHash, readMcpApprovals } from '../../store/mcpApprovals.js';
import { importMarkOf, isImportedSeq } from '../log/imported.js';
import { applyProjectToolRules } from './toolRules.js';
import { followResourceUpdates } from './resourceSubscriptions.js';
import { readSettings } from '../../store/settings.js';
import type { KeptMcp, McpPool } from './pool.js';

/** What a turn host knows when it opens a session's MCP servers. */
export type SessionMcpOptions = {
  home: string;
  /** Real path of the session's root: where `.mcp.json` is read and stdio servers work (read-only). */
  projectRoot: string;
  /** The project folder the session was made for: what an approval of its `.mcp.json` names. */
  projectFolder: string;
  sandbox: SandboxInfo;
  network: NetworkPolicy;
  /** Host paths the servers must not see (the Keel home). */
  hidden: readonly string[];
  /** The environment PATH and the locale come from; nothing else of it reaches a server. */
  env: NodeJS.ProcessEnv;
  onNotice?: (text: string) => void;
  /**
   * The session's redactor: what a server wrote (tool descriptions and schemas, a failed server's error and
   * stderr, notices) passes through it before it reaches the provider, the log or the user.
   */
  redact: (text: string) => string;
  onEvent?: (event: SessionEvent) => void;
  /**
   * A long-lived host's pool: the session's servers are taken from it when they were started from the same
   * configuration and none failed for good (else restarted), and `close()` gives them back instead of
   * stopping them. Without it they live for this turn.
   */
  pool?: McpPool;
  /** Awaited before any server is started or taken up from the pool (the turn's start of its changes). */
  beforeStart?: () => Promise<void>;
};

/**
 * Starts (or, with a pool, takes up the kept) session's MCP servers for a turn: the settings' servers, and the project's `.mcp.json` ones
 * when that file's hash is approved in the home (`keel mcp approve`); an unapproved file starts nothing and
 * says how to approve it. Appends `mcp_tools_listed` when the servers or tools differ from the newest one,
 * so the tool list a turn sends is on record and changes only between turns. Undefined when no server is
 * configured.
 */
export async function openSessionMcp(
  log: SessionLog,
  options: SessionMcpOptions,
): Promise<McpSession | undefined> {
  const redact = options.redact;
  const notice = (text: string) => options.onNotice?.(redact(text));
  const settings = readSettings(options.home);
  const project = readProjectMcpConfig(options.projectRoot);
  const folder = realOrSame(options.projectFolder);
  const approved = approvedConfigHash(readMcpApprovals(options.home), folder);
  const plan = planMcpServers(settings.mcp.servers, project, approved);
  for (const problem of plan.problems) notice(problem);
  const emit = (event: SessionEvent | undefined) => {
    if (event) options.onEvent?.(event);
  };
  emit(applyProjectToolRules(options.home, log, folder));
  if (plan.project.status === 'trusted') emit(recordTrustUsed(log, options.home, folder, plan.project));
  if (plan.project.status === 'untrusted') {
    notice(
      `This project's ${PROJECT_CONFIG_FILE} declares MCP servers (${plan.project.servers.join(', ')}) that were not started: ` +
        `the file is new or changed since it was approved. Review it, then approve it with: keel mcp approve --project ${folder}`,
    );
  } else if (plan.project.status === 'invalid') {
    notice(`The project's MCP servers were not started: ${plan.project.error}`);
  }
  const box = {
    sandbox: options.sandbox,
    projectRoot: options.projectRoot,
    scratchRoot: path.join(log.dir, 'mcp'),
    hidden: options.hidden,
    network: options.network,
    baseEnv: options.env,
    // An HTTP server's stored OAuth grant (keel mcp login); refreshed by the SDK, never in the box or the log.
    authFor: storedMcpAuth(options.home),
  };
  // Everything the servers are started from: the same key means the kept ones are these servers.
  const key = crypto
    .createHash('sha256')
    .update(
      JSON.stringify({
        servers: plan.servers,
        disabled: settings.mcp.disabledTools,
        sandbox: options.sandbox.kind,
        network: options.network,
        root: options.projectRoot,
        hidden: options.hidden,
        path: options.env.PATH ?? null,
      }),
    )
    .digest('hex');
  // A server may write the folder whenever it runs (a `writeProject` one): the turn's changes start before it.
  if (plan.servers.length > 0) await options.beforeStart?.();
  const pool = options.pool;
  let kept = pool?.take(log.id);
  let changedBy: string[] = [];
  if (kept && (kept.key !== key || !kept.session.healthy() || plan.servers.length === 0)) {
    if (kept.key !== key) notice('The MCP configuration changed: its servers were restarted');
    await kept.session.close();
    kept = undefined;
  }
  if (kept) {
    // Every kept server is listed again at the turn's start, notice or not: a Streamable HTTP server's
    // tools/list_changed sent while no GET stream is open is lost (server-everything sends one right after
    // initialize), so the notice alone cannot say the list is current. One tools/list per server per turn;
    // the list then stays fixed for the turn (the cached prefix).
    const before = toolSignatures(kept.session);
    const notified = kept.session.changed();
    await kept.session.relist();
    const after = toolSignatures(kept.session);
    const names = new Set([...before.keys(), ...after.keys()]);
    changedBy = [...names].filter((name) => notified.includes(name) || before.get(name) !== after.get(name));
  }
  const notices: KeptMcp['notices'] = kept?.notices ?? {};
  notices.send = options.onNotice ? notice : undefined;
  const started =
    kept?.session ??
    (plan.servers.length === 0
      ? undefined
      : await startMcpSession({
          plan,
          box,
          disabledTools: settings.mcp.disabledTools,
          // Through the sink: a kept server's crash in a later turn is that turn's notice.
          onNotice: (text) => notices.send?.(text),
        }));
  const held =
    started && pool ? keptSession(started, pool, log.id, { key, session: started, notices }) : started;
  if (!held) pool?.release(log.id);
  // What the turn (its provider requests) and the log see: the servers' words through this turn's redactor.
  const session = held ? redactMcpSession(held, redact) : undefined;
  for (const report of session?.servers ?? []) {
    if (report.state.state !== 'failed') continue;
    // A kept server whose re-list failed was closed: its tools are gone for this turn, the next restarts it.
    notice(
      kept
        ? `MCP server "${report.name}" failed: ${report.state.error}; it restarts at the next turn`
        : `MCP server "${report.name}" failed to start: ${report.state.error}`,
    );
  }
  const listed: Omit<EventOf<'mcp_tools_listed'>, 'seq' | 'at'> = {
    kind: 'mcp_tools_listed',
    servers: (session?.servers ?? []).map((report) => ({
      name: report.name,
      source: report.source,
      transport: report.transport,
      state: report.state.state === 'ready' ? 'ready' : 'failed',
      ...(report.state.state === 'failed'
        ? {
            error: report.state.error,
            ...(report.state.stderrTail ? { stderrTail: report.state.stderrTail } : {}),
          }
        : {}),
      tools: report.tools,
    })),
    ...(plan.project.status === 'absent'
      ? {}
      : {
          project:
            plan.project.status === 'invalid'
              ? { status: 'invalid' as const, error: plan.project.error }
              : { status: plan.project.status, hash: plan.project.hash, servers: plan.project.servers },
        }),
    ...(changedBy.length > 0 ? { changedBy } : {}),
    ...(session && session.skipped.length > 0
      ? { skipped: session.skipped.map((s) => `${s.server}/${s.tool}: ${s.reason}`) }
      : {}),
  };
  if (changedBy.length > 0 || differsFromNewest(log, listed)) {
    const result = log.append(listed);
    if (result.ok) for (const event of result.events) options.onEvent?.(event);
  }
  // Issue 33: updates of subscribed resources since the last turn, then subscriptions for what it read.
  if (session) await followResourceUpdates(log, session, options.onEvent);
  return session;
}

/**
 * Appends mcp_config_trusted when this session starts a project's servers from bytes it has not recorded
 * trusting (its newest one made here names another hash, or there is none): the log alone then says which
 * servers it trusted, from which approval. The approval itself stays in the home's mcp-approvals.jsonl.
 */
function recordTrustUsed(
  log: SessionLog,
  home: string,
  folder: string,
  project: { hash: string; servers: string[] },
): SessionEvent | undefined {
  const [created] = log.read({ fromSeq: 1, limit: 1, validate: false });
  const mark = created?.kind === 'session_created' ? importMarkOf(created) : undefined;
  const previous = (
    log.readKinds(['mcp_config_trusted'], { validate: false }) as EventOf<'mcp_config_trusted'>[]
  )
    .filter((event) => !isImportedSeq(mark, event.seq))
    .at(-1);
  if (previous?.configHash === project.hash && previous.project === folder) return undefined;
  const approval = readMcpApprovals(home)
    .filter((event) => event.project === folder && event.kind === 'mcp_config_approved')
    .at(-1);
  if (approval?.configHash !== project.hash) return undefined;
  const result = log.append({
    kind: 'mcp_config_trusted',
    project: folder,
    configHash: project.hash,
    servers: project.servers,
    approvedAt: approval.at,
    via: approval.via,
  });
  return result.ok ? result.events[0] : undefined;
}

/** The session as a turn sees it, whose `close()` gives the servers back to the pool. */
function keptSession(session: McpSession, pool: McpPool, sessionId: string, entry: KeptMcp): McpSession {
  let given: Promise<void> | undefined;
  return {
    tools: session.tools,
    servers: session.servers,
    skipped: session.skipped,
    resources: session.resources,
    listPrompts: () => session.listPrompts(),
    getPrompt: (server, name, args) => session.getPrompt(server, name, args),
    readResource: (server, uri) => session.readResource(server, uri),
    callTool: (server, tool, args) => session.callTool(server, tool, args),
    subscribe: (server, uri) => session.subscribe(server, uri),
    takeResourceUpdates: () => session.takeResourceUpdates(),
    watchResourceUpdates: (arrived) => session.watchResourceUpdates(arrived),
    changed: () => session.changed(),
    healthy: () => session.healthy(),
    relist: () => session.relist(),
    close: () => (given ??= pool.keep(sessionId, entry)),
  };
}

/**
 * Per server, what its tools tell a provider (names, descriptions, schemas, kinds) and what was skipped: two
 * listings of a server differ exactly when its signature does.
 */
function toolSignatures(session: McpSession): Map<string, string> {
  return new Map(
    session.servers.map((report) => {
      const prefix = `mcp__${report.name}__`;
      const tools = session.tools
        .filter((tool) => tool.name.startsWith(prefix))
        .map((tool) => [tool.name, tool.description, tool.inputJsonSchema ?? null, tool.kind]);
      const skipped = session.skipped.filter((s) => s.server === report.name).map((s) => [s.tool, s.reason]);
      return [report.name, JSON.stringify({ state: report.state.state, tools, skipped })];
    }),
  );
}

/** True when `next` says something else than the session's newest mcp_tools_listed (none: unless it is empty). */
function differsFromNewest(log: SessionLog, next: Omit<EventOf<'mcp_tools_listed'>, 'seq' | 'at'>): boolean {
  const previous = log.readKinds(['mcp_tools_listed'], { validate: false }).at(-1) as
    EventOf<'mcp_tools_listed'> | undefined;
  if (!previous) return next.servers.length > 0 || next.project !== undefined;
  const comparable = (event: Omit<EventOf<'mcp_tools_listed'>, 'seq' | 'at'>) =>
    JSON.stringify({
      servers: event.servers.map((s) => ({ name: s.name, source: s.source, state: s.state, tools: s.tools })),
      project: event.project ?? null,
    });
  return comparable(previous) !== comparable(next);
}

function realOrSame(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return path.resolve(folder);
  }
}
