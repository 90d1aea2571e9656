import {
  agent,
  type AgentConnection,
  type AgentContext,
  type AuthMethod,
  PROTOCOL_VERSION,
  RequestError,
  type Stream,
} from '@agentclientprotocol/sdk';
import type { ProviderKind } from '../common/events.js';
import {
  createHarness,
  type Harness,
  homeStoredKeys,
  sessionPromptCommands,
  visibleEvents,
} from '../core/harness/index.js';
import { runPrompt } from './prompt.js';
import { promptParts } from './promptBlocks.js';
import {
  clientFolder,
  configuredProviders,
  createSession,
  listSessions,
  type LoadedSession,
  modesOf,
  readSession,
  setMode,
} from './sessions.js';
import { replayUpdates } from './updates.js';

/*
 * `keel acp`: Keel as an Agent Client Protocol agent (the official SDK's agent side). A connection knows the
 * sessions it made, loaded or resumed; each runs at most one prompt at a time, and `session/cancel` stops it
 * as Keel's stop does (the interruption is recorded). Nothing is kept here that the log does not hold: a
 * fresh `keel acp` loads any session and continues it.
 */

/** What the agent needs from its host (the CLI command). */
export type AcpAgentOptions = {
  home: string;
  env: NodeJS.ProcessEnv;
  version: string;
};

type Active = {
  view: LoadedSession['view'];
  contextWindow: number;
  /** The running prompt's stop and its end. */
  turn?: { controller: AbortController; done: Promise<unknown> };
};

const PROVIDER_NAMES: Record<ProviderKind, string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  'openai-compatible': 'OpenAI-compatible server',
  local: 'Local model',
};

/** Serves one ACP client over `stream` until it closes; running prompts are stopped then. */
export function serveAcp(
  options: AcpAgentOptions,
  stream: Stream,
): AgentConnection & { stopAll(): Promise<void> } {
  // Keys: those `keel serve` keeps in the home (issue #37), else the environment's.
  const harness: Harness = createHarness({
    home: options.home,
    env: options.env,
    keys: () => homeStoredKeys(options.home),
    // An editor's agent lives across many turns: its snapshots stage only what changed (issue #36).
    watchProjects: true,
  });
  const active = new Map<string, Active>();
  let provider: ProviderKind | undefined;

  const activate = (id: string): LoadedSession => {
    const loaded = readSession(options.home, id);
    const known = active.get(id);
    active.set(id, { ...known, view: loaded.view, contextWindow: loaded.contextWindow });
    return loaded;
  };
  const activeOf = (id: string): Active => {
    const session = active.get(id);
    if (!session) throw RequestError.sessionNotFound(id);
    return session;
  };
  const notify = (client: AgentContext, sessionId: string, updates: ReturnType<typeof replayUpdates>) =>
    updates.reduce<Promise<void>>(
      (chain, update) => chain.then(() => client.notify('session/update', { sessionId, update })),
      Promise.resolve(),
    );

  // The `/` commands the editor offers (command files, MCP prompts): sent after the session's answer, since
  // listing MCP prompts starts the servers once; a prompt `/name args` is expanded by runPrompt.
  const sendCommands = (client: AgentContext, sessionId: string) =>
    void sessionPromptCommands(options.home, sessionId, options.env)
      .then((commands) =>
        client.notify('session/update', {
          sessionId,
          update: {
            sessionUpdate: 'available_commands_update',
            availableCommands: commands.map((command) => ({
              name: command.name,
              description: command.description,
              ...(command.argument ? { input: { hint: command.argument } } : {}),
            })),
          },
        }),
      )
      .catch(() => undefined);

  const app = agent({ name: 'keel' })
    .onRequest('initialize', () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        // Issue #32: images become attachments, embedded resources and file links staged files (promptBlocks.ts).
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        // Keel starts the MCP servers its settings and the project's approved .mcp.json name, in its box.
        mcpCapabilities: { http: false, sse: false },
        sessionCapabilities: { list: {}, resume: {}, close: {} },
      },
      authMethods: authMethodsOf(options),
      agentInfo: { name: 'keel', title: 'Keel', version: options.version },
    }))
    .onRequest('authenticate', ({ params }) => {
      const kind = configuredProviders(options.home, options.env).find(
        (k) => methodId(k) === params.methodId,
      );
      if (kind === undefined)
        throw RequestError.invalidParams(
          { methodId: params.methodId },
          'not a provider Keel can use here: set its key in the environment or its base URL in settings.json',
        );
      provider = kind;
      return {};
    })
    .onRequest('session/new', async ({ params, client }) => {
      const folder = clientFolder(params.cwd);
      const { id, policy } = await createSession(harness, options.env, folder, provider);
      activate(id);
      sendCommands(client, id);
      return { sessionId: id, modes: modesOf(policy) };
    })
    .onRequest('session/load', async ({ params, client }) => {
      clientFolder(params.cwd);
      const loaded = activate(params.sessionId);
      // The log is the truth: every visible event once, in order, before the answer.
      await notify(
        client,
        params.sessionId,
        replayUpdates(visibleEvents(loaded.events), {
          view: loaded.view,
          contextWindow: loaded.contextWindow,
        }),
      );
      sendCommands(client, params.sessionId);
      return { modes: modesOf(loaded.policy, loaded.planMode) };
    })
    .onRequest('session/resume', ({ params, client }) => {
      clientFolder(params.cwd);
      const loaded = activate(params.sessionId);
      sendCommands(client, params.sessionId);
      return { modes: modesOf(loaded.policy, loaded.planMode) };
    })
    .onRequest('session/list', ({ params }) =>
      listSessions(options.home, params.cwd ?? undefined, params.cursor ?? undefined),
    )
    .onRequest('session/close', async ({ params }) => {
      const session = active.get(params.sessionId);
      if (session?.turn) {
        session.turn.controller.abort();
        await session.turn.done.catch(() => undefined);
      }
      active.delete(params.sessionId);
      // Issue #30: the editor let go of the session: it ends here (SessionEnd hooks, once, within their budget).
      await harness.endSessions({ reason: 'other', sessionId: params.sessionId });
      return {};
    })
    .onRequest('session/set_mode', async ({ params, client }) => {
      const session = activeOf(params.sessionId);
      if (session.turn)
        throw RequestError.invalidRequest(undefined, 'a prompt is running: cancel it or wait');
      const mode = await setMode(options.home, params.sessionId, params.modeId);
      await client.notify('session/update', {
        sessionId: params.sessionId,
        update: { sessionUpdate: 'current_mode_update', currentModeId: mode },
      });
      return {};
    })
    .onRequest('session/prompt', async ({ params, client }) => {
      const session = activeOf(params.sessionId);
      if (session.turn)
        throw RequestError.invalidRequest(
          undefined,
          'this session is already running a prompt: cancel it first',
        );
      const parts = promptParts(params.prompt);
      const controller = new AbortController();
      const done = runPrompt(
        { harness, env: options.env, client, view: session.view, contextWindow: session.contextWindow },
        params.sessionId,
        parts,
        controller.signal,
      );
      session.turn = { controller, done };
      try {
        return { stopReason: await done };
      } finally {
        session.turn = undefined;
      }
    })
    .onNotification('session/cancel', ({ params }) => {
      active.get(params.sessionId)?.turn?.controller.abort();
    });

  const connection = app.connect(stream);
  const stopAll = async () => {
    const turns = [...active.values()].flatMap((session) => (session.turn ? [session.turn] : []));
    for (const turn of turns) turn.controller.abort();
    await Promise.all(turns.map((turn) => turn.done.catch(() => undefined)));
    await harness.stopMcp();
    // Issue #30: Keel exits: every session it ran ends (once, even when both the close and a signal stop it).
    await harness.endSessions({ reason: 'other' });
  };
  // A client that goes away stops what runs for it; the interruptions are recorded.
  void connection.closed.then(stopAll, stopAll);
  return Object.assign(connection, { stopAll });
}

const methodId = (kind: ProviderKind) => `provider:${kind}`;

/** Keel's configured providers as ACP auth methods (the key stays in Keel's environment, never on the wire). */
function authMethodsOf(options: AcpAgentOptions): AuthMethod[] {
  return configuredProviders(options.home, options.env).map((kind) => ({
    id: methodId(kind),
    name: PROVIDER_NAMES[kind],
    description: `Use ${PROVIDER_NAMES[kind]} for new sessions (as configured for Keel)`,
  }));
}
