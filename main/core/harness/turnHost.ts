import path from 'node:path';
import { createCompactionHook } from '../compaction/hook.js';
import { resolveCompactionSettings, type CompactionSettings } from '../compaction/settings.js';
import { systemClock, type Clock } from '../../common/clock.js';
import type { CommandUse } from '../../common/customEvents.js';
import type { EventOf, ModelPin } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { sessionNetworkAllow } from '../log/imported.js';
import {
  describeEnvironment,
  knownCleanGitFacts,
  readGitFacts,
  type GitFacts,
} from '../prompts/environment.js';
import { readProjectInstructions } from '../prompts/instructions.js';
import { createSubagentRunner } from '../subagents/childSession.js';
import { readSubagentSpec } from '../subagents/spec.js';
import type { SettingsChange, TurnHooks, TurnHost } from '../turn/engine.js';
import { createProvider, type ModelProvider, type ProviderKeys } from '../../providers/index.js';
import { detectSandbox, type NetworkPolicy } from '../../sandbox/box.js';
import { createToolRegistry } from '../../tools/registry.js';
import { openSessionMcp } from '../mcp/sessionServers.js';
import { resourceArrivals } from '../mcp/resourceSubscriptions.js';
import { applyPermissionRules, defaultUserHome, loadSetup } from '../setup/index.js';
import { hooksOf } from '../hooks/config.js';
import { afterCompactionHooks, hookStop, preCompactHooks } from '../turn/hookSteps.js';
import type { HookEventName } from '../../common/hookEvents.js';
import type { HookOutcome, HookScope } from '../hooks/run.js';
import type { BeforeRequestContext, TurnOutcome } from '../turn/engine.js';
import type { McpPool } from '../mcp/pool.js';
import { homeOf } from '../paths.js';
import { commandOfLastMessage, EMPTY_SETUP, listingOf, type CustomSetup } from '../custom/index.js';
import { loadSkillTool } from '../custom/loadSkill.js';
import { SPAWN_SUBAGENT } from '../../tools/spawnSubagent.js';
import { presentPlanTool } from '../../tools/presentPlan.js';
import type { ToolModule } from '../../tools/types.js';
import { readCustomSetup } from './customCommands.js';
import { readBackgroundRecords } from './backgroundLog.js';
import { pinnedPromptOf, sessionWorkspace, toolContextFor, turnTimeRedactor } from './workspace.js';

/** Name of the file in a session folder that asks a running turn to stop (written by `keel stop`). */
export const STOP_REQUEST_FILE = 'stop-request';

export type TurnHostOptions = {
  /** API keys from settings; the environment is the fallback. */
  keys?: ProviderKeys;
  /** The environment providers read keys from and commands' allowlisted variables come from. */
  env?: NodeJS.ProcessEnv;
  hooks?: TurnHooks;
  signal?: AbortSignal;
  maxSteps?: number;
  /** Issue #37: settings changed while the turn runs (TurnHost.settingsChanges). */
  settingsChanges?: () => SettingsChange[];
  /**
   * The folder tools act in (their root and the box's folder, without areas); defaults to the session's
   * layout (workspace.ts): the project's checkout or folder, or a session from before's workspace.
   */
  workspace?: string;
  /** Builds the pinned provider instead of the built-in factory (a custom or test provider). */
  createProvider?: (pin: ModelPin) => ModelProvider;
  /**
   * Global compaction settings (settings.json's `compaction`); a session's own
   * `session_created.metadata.compaction` overrides them. Defaults: 75% threshold, 20% kept; threshold 0 = off.
   */
  compaction?: Partial<CompactionSettings>;
  /** The clock the environment block's date comes from (default: the machine's). */
  clock?: Clock;
  /** False: start no MCP server for this turn (default: the settings' and the approved project's). */
  mcp?: false;
  /** A long-lived host's pool: the session's MCP servers outlive the turn (mcp/pool.ts). */
  mcpPool?: McpPool;
  /**
   * The host's `beforeChanges` (a `--commit direct` session's photograph of its folder): also run before the
   * session's MCP servers start or are taken up, since a server may write the folder at any time.
   */
  beforeChanges?: () => Promise<void>;
  /** The log's session_created event when the caller has read it already (it never changes): not read again. */
  created?: EventOf<'session_created'>;
  /**
   * Issue #30: the custom command of the turn this host starts (`null`: a new turn from a plain prompt);
   * absent: the turn continues, and the newest user message's command still bounds its tools.
   */
  turnCommand?: CommandUse | null;
  /** The skills, commands and agents in effect; default: read for the session's project (main/core/setup). */
  custom?: CustomSetup;
  /** HarnessOptions.webFetch.testAddresses: the test seam of web_fetch (programmatic only). */
  fetchTestAddresses?: readonly string[];
  /** Issue #30: TurnHost.resumed (this process's first turn of a session that has turns). */
  resumed?: boolean;
};

/**
 * Builds everything a turn needs for a session open for writing: the pinned provider factory, the tool
 * registry of its mode, the box (detected OS sandbox, network allowlist, protected paths), a redactor that
 * knows the workspace's .env values and the environment's secrets (Keel's own keys included), the stop file.
 * A top-level session also gets spawn_subagent and the runner of its children; a child session (its
 * session_created carries a subagent spec) gets only the tools of its spec and spawns nothing.
 */
export async function createTurnHost(log: SessionLog, options: TurnHostOptions = {}): Promise<TurnHost> {
  const created = options.created ?? log.read({ fromSeq: 1, limit: 1 })[0];
  if (created?.kind !== 'session_created') throw new Error(`session ${log.id} has no session_created event`);
  const env = options.env ?? process.env;
  const layout = sessionWorkspace(log, created, options.workspace);
  const workspace = layout.workspace;
  const keys = options.keys ?? {};
  const projectRoot = path.resolve(workspace, layout.commandCwd);
  // The first request's git facts are read from now on (checkouts are reset already), so git's run overlaps the
  // turn's setup, its appends and the projection instead of following them. Anything that may change the
  // folder before that request (a tool that can, an MCP server starting) drops them: they are read again then.
  let gitAhead: Promise<GitFacts> | undefined = layout.knownClean?.includes(projectRoot)
    ? Promise.resolve(knownCleanGitFacts(created.projectFolder))
    : readGitFacts({ projectFolder: created.projectFolder, projectRoot }, layout.viewStatus);
  // The whole box's .env values: the root, the private area and every checkout; read when first needed, at
  // the latest before anything may change the box (beforeChanges).
  const redactor = turnTimeRedactor(layout.boxRoot, env, keys, options.hooks?.onNotice);
  let viewsConfirmed = false;
  const beforeChanges = async () => {
    gitAhead = undefined;
    redactor.build();
    await options.beforeChanges?.();
  };
  const sandbox = await detectSandbox();
  const allow = sessionNetworkAllow(created);
  const spec = readSubagentSpec(created);
  const home = homeOf(log.dir);
  const network: NetworkPolicy = allow.length > 0 ? { allow } : 'none';
  // A child session gets no MCP servers: its tools are exactly its spec's.
  const mcp =
    options.mcp === false || spec
      ? undefined
      : await openSessionMcp(log, {
          home,
          projectRoot,
          projectFolder: created.projectFolder,
          sandbox,
          network,
          hidden: layout.boxHidden,
          env,
          ...(options.mcpPool ? { pool: options.mcpPool } : {}),
          beforeStart: beforeChanges,
          redact: (text) => redactor.redact(text),
          ...(options.hooks?.onNotice ? { onNotice: options.hooks.onNotice } : {}),
          ...(options.hooks?.onEvent ? { onEvent: options.hooks.onEvent } : {}),
        });
  // The permission rules this turn runs under (the user's, the project's approved, Keel's), in the log first.
  const rulesApplied = applyPermissionRules(log, {
    home,
    userHome: defaultUserHome(env),
    project: created.projectFolder,
  });
  if (rulesApplied) options.hooks?.onEvent?.(rulesApplied);
  // The user's skills and custom agents, and the project's once approved; a child gets none (its tools are its spec's).
  const custom = spec
    ? EMPTY_SETUP
    : (options.custom ?? readCustomSetup({ home, env, project: created.projectFolder }));
  // Issue #30: the hooks of the user's settings and of the project's approved ones (a changed file: none of
  // its hooks until approved again); a child runs its parent's, so a refusing hook covers its calls too.
  const lifecycleHooks = hooksOf(
    loadSetup({ home, userHome: defaultUserHome(env), project: created.projectFolder }),
  );
  const extra: ToolModule[] = [
    ...(custom.skills.length > 0 ? [loadSkillTool(custom.skills)] : []),
    // Issue #30: offered once the session has been in plan mode, and from then on (a stable tool list keeps
    // the prompt cache; outside plan mode a call is a tool error). A child never plans (its spec's tools).
    ...(log.lastSeqOfKind('plan_mode_changed') !== undefined ? [presentPlanTool] : []),
    ...(mcp?.tools ?? []),
  ];
  // A custom command's allowed-tools bounds the turn it starts (and its continuation after an approval).
  const command =
    options.turnCommand === undefined ? commandOfLastMessage(log) : (options.turnCommand ?? undefined);
  const allowed = command?.allowedTools;
  const registry = createToolRegistry(
    created.toolMode,
    spec
      ? { only: spec.tools }
      : allowed
        ? {
            only: allowed,
            subagents: allowed.includes(SPAWN_SUBAGENT),
            extra: extra.filter((tool) => allowed.includes(tool.name)),
          }
        : { subagents: true, extra },
  );
  const compaction = resolveCompactionSettings(options.compaction, created);
  const toolContext: TurnHost['tools'] & { boxReadOnly: string[]; boxHidden: string[] } = toolContextFor(
    layout,
    created,
    { sessionDir: log.dir, artifactsDir: log.artifactsDir, redactor, sandbox },
  );
  if (options.fetchTestAddresses?.length) toolContext.fetchTestAddresses = [...options.fetchTestAddresses];
  // Issue #32: a handle this Keel no longer runs is answered with what the log says of it.
  toolContext.backgroundRecord = (handle) => readBackgroundRecords(log).get(handle);
  const host: TurnHost = {
    log,
    createProvider: options.createProvider ?? ((pin: ModelPin) => createProvider(pin, keys, env)),
    registry,
    tools: toolContext,
    sandboxAvailable: sandbox.kind !== 'none',
    systemPrompt: pinnedPromptOf(created, layout.hasCheckouts) + layout.promptSuffix,
    ...(spec ? {} : { custom: listingOf(custom) }),
    ...(lifecycleHooks.length > 0 ? { lifecycleHooks } : {}),
    ...(options.resumed ? { resumed: true } : {}),
    instructions: () =>
      readProjectInstructions({
        workspace,
        projectRoot: layout.commandCwd,
        redact: (text) => redactor.redact(text),
      }),
    environment: (state) => {
      const source = {
        clock: options.clock ?? systemClock,
        projectFolder: state.projectFolder,
        projectRoot,
        sandbox,
        network: toolContext.network ?? 'none',
        policy: state.policy,
        toolMode: state.toolMode,
        planMode: state.planMode,
      };
      const ahead = state.projectFolder === created.projectFolder ? gitAhead : undefined;
      gitAhead = undefined;
      const described = describeEnvironment(source, ahead ?? readGitFacts(source, layout.viewStatus));
      if (!viewsConfirmed) {
        // A view's reset no watch saw is checked once the first request is on its way (the check's stat pass then
        // runs while the model answers, not while the request is made); a direct session's folder is watched from then.
        viewsConfirmed = true;
        const confirm = () => {
          layout.confirmViews?.();
          layout.watchAhead?.();
        };
        described.then(confirm, confirm);
      }
      return described;
    },
    stopFile: path.join(log.dir, STOP_REQUEST_FILE),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.maxSteps ? { maxSteps: options.maxSteps } : {}),
    ...(options.settingsChanges ? { settingsChanges: options.settingsChanges } : {}),
    // Issue 33: a subscribed resource's update is recorded as it arrives in the turn.
    ...(mcp ? { arrivals: resourceArrivals(mcp) } : {}),
    beforeChanges,
    ...(compaction.threshold > 0
      ? {
          beforeRequest: createCompactionHook({
            log,
            settings: compaction,
            tools: registry.definitions(),
            // Issue #30: the user's PreCompact hooks (trigger auto) before, SessionStart (source compact) after;
            // a fresh `continue: false` of either ends the turn (before: nothing compacted).
            beforeCompact: async (context) => {
              const ran = await preCompactHooks(hookScopeOf(host, context));
              return ran?.stop && !ran.replayed ? hookEnded('PreCompact', ran) : undefined;
            },
            afterCompact: async (context) => {
              const ran = await afterCompactionHooks(hookScopeOf(host, context));
              return ran?.stop && !ran.replayed ? hookEnded('SessionStart', ran) : undefined;
            },
          }),
        }
      : {}),
  };
  // A turn that ended before its first request leaves no git behind it.
  host.dispose = async () => {
    await gitAhead;
    gitAhead = undefined;
    await mcp?.close();
  };
  // A session's folder is <home>/sessions/<id>: its children are sessions of the same home.
  if (!spec) {
    host.subagents = createSubagentRunner({
      home,
      parent: host,
      agents: custom.agents,
      ...(compaction.threshold > 0
        ? {
            childBeforeRequest: (child, childRegistry) =>
              createCompactionHook({ log: child, settings: compaction, tools: childRegistry.definitions() }),
          }
        : {}),
    });
  }
  return host;
}

/** The hooks runner's view of a turn, from inside its beforeRequest. */
function hookScopeOf(host: TurnHost, context: BeforeRequestContext): HookScope {
  return { host, state: context.state, append: context.append, signal: context.signal };
}

/** The outcome of a turn a hook ended before its request (`continue: false`). */
function hookEnded(event: HookEventName, ran: HookOutcome): TurnOutcome {
  return { status: 'completed', text: '', stop: hookStop(event, ran) };
}
