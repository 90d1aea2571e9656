import type { EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import type { HookEventName, SessionEndReason } from '../../common/hookEvents.js';
import type { ProviderKeys } from '../../providers/index.js';
import { detectSandbox } from '../../sandbox/box.js';
import { hooksOf, sessionEndBudgetMs, type HookDef } from '../hooks/config.js';
import { runHooks, type HookOutcome, type HookScope } from '../hooks/run.js';
import type { SessionLog } from '../log/sessionLog.js';
import { homeOf } from '../paths.js';
import { defaultUserHome, loadSetup } from '../setup/index.js';
import { mountViews } from '../persistent/turnCheckouts.js';
import { loadSessionState } from '../turn/loadState.js';
import { preCompactHooks } from '../turn/hookSteps.js';
import { applyEvent, type SessionState } from '../turn/state.js';
import { readSessionWorkspace, sessionRedactor, toolContextFor } from './workspace.js';

/*
 * Issue #30: the user's hooks outside a turn, in the same box a turn's hooks get (the session's folder, its
 * network policy, Keel's home hidden), with the same setup files (the user's, the project's approved ones): the
 * PreCompact hooks (trigger `manual`) of a compaction the user asks for (`keel compact`, the app), and the
 * SessionEnd hooks when a host lets go of a session (sessionEnd below).
 */

/** What running hooks outside a turn needs besides the log. */
export type ManualHookOptions = {
  env: NodeJS.ProcessEnv;
  keys?: ProviderKeys;
  onNotice?: (text: string) => void;
  /** What the user asked the summary to keep (Claude Code's `/compact <instructions>`): `custom_instructions`. */
  instructions?: string;
};

/** The hooks of `event` in effect for a session (the user's, its project's approved ones). */
function hooksOfSession(
  log: SessionLog,
  created: EventOf<'session_created'>,
  event: HookEventName,
  env: NodeJS.ProcessEnv,
): HookDef[] {
  return hooksOf(
    loadSetup({ home: homeOf(log.dir), userHome: defaultUserHome(env), project: created.projectFolder }),
  ).filter((hook) => hook.event === event);
}

/** Whether a SessionEnd hook is in effect for a session (its log open for reading): nothing to end without one. */
export function hasSessionEndHooks(log: SessionLog, env: NodeJS.ProcessEnv): boolean {
  const created = log.read({ fromSeq: 1, limit: 1 })[0];
  return created?.kind === 'session_created' && hooksOfSession(log, created, 'SessionEnd', env).length > 0;
}

/**
 * The hooks runner's scope for `event` outside a turn, on a session open for writing: its runs are appended to
 * the log (and folded into `state`). Undefined when no hook of that event is in effect.
 */
async function hookScopeFor(
  log: SessionLog,
  created: EventOf<'session_created'>,
  state: SessionState,
  event: HookEventName,
  options: Pick<ManualHookOptions, 'env' | 'keys' | 'onNotice'>,
): Promise<{ scope: HookScope; hooks: HookDef[] } | undefined> {
  const hooks = hooksOfSession(log, created, event, options.env);
  if (hooks.length === 0) return undefined;
  // Issue #36: a view's files are reached through its holder, mounted here first (a turn mounts them at its start).
  await mountViews(log.dir);
  const layout = readSessionWorkspace(log, created);
  const redactor = sessionRedactor(layout.boxRoot, options.env, options.keys ?? {});
  const tools = toolContextFor(layout, created, {
    sessionDir: log.dir,
    artifactsDir: log.artifactsDir,
    redactor,
    sandbox: await detectSandbox(),
  });
  const scope: HookScope = {
    host: {
      log,
      tools,
      lifecycleHooks: hooks,
      ...(options.onNotice ? { hooks: { onNotice: options.onNotice } } : {}),
    },
    state,
    append: (next: NewEvent): SessionEvent => {
      const appended = log.append(next, { expectedLastSeq: state.lastSeq });
      if (!appended.ok) throw new Error(`the session changed while its ${event} hooks ran: try again`);
      const written = appended.events[0] as SessionEvent;
      applyEvent(state, written);
      return written;
    },
  };
  return { scope, hooks };
}

/**
 * Runs the PreCompact hooks (trigger `manual`) of a session open for writing, before a compaction the user
 * asked for; their runs are appended to its log. Undefined when no PreCompact hook is in effect.
 */
export async function manualPreCompact(
  log: SessionLog,
  created: EventOf<'session_created'>,
  state: SessionState,
  options: ManualHookOptions,
): Promise<HookOutcome | undefined> {
  const found = await hookScopeFor(log, created, state, 'PreCompact', options);
  if (!found) return undefined;
  return preCompactHooks(found.scope, 'manual', options.instructions ?? '');
}

/** How far back from the log's end the last event a SessionEnd did not add is looked for. */
const END_TAIL = 64;

/**
 * The SessionEnd hooks of a session open for writing (Claude Code's input: `reason`; they cannot block
 * anything): run together, all stopped at the end's budget (config.ts `sessionEndBudgetMs`), one `hook_ran`
 * each (subject `end:<seq>`, the last event before them). An end runs once: a session without a turn has
 * nothing to end, and one whose last events are already a SessionEnd's runs ended already (another host, an
 * earlier call) and is not ended again until something happens in it. Undefined when nothing ran.
 */
export async function sessionEnd(
  log: SessionLog,
  reason: SessionEndReason,
  options: Pick<ManualHookOptions, 'env' | 'keys' | 'onNotice'>,
): Promise<HookOutcome | undefined> {
  const state = loadSessionState(log);
  if (state.turns === 0) return undefined;
  const last = log.lastSeq();
  const tail = log.read({ fromSeq: Math.max(1, last - END_TAIL + 1), validate: false });
  const since = tail.findLast((e) => !(e.kind === 'hook_ran' && e.event === 'SessionEnd'))?.seq;
  if (since === undefined) return undefined;
  const created = log.read({ fromSeq: 1, limit: 1 })[0] as EventOf<'session_created'>;
  const found = await hookScopeFor(log, created, state, 'SessionEnd', options);
  if (!found) return undefined;
  const budget = sessionEndBudgetMs(found.hooks, options.env);
  const outcome = await runHooks(found.scope, {
    event: 'SessionEnd',
    subject: `end:${since}`,
    hooks: found.hooks.map((hook) => ({ ...hook, timeoutMs: Math.min(hook.timeoutMs, budget) })),
    input: { reason },
    since,
    ...(options.onNotice ? { onNotice: options.onNotice } : {}),
  });
  return outcome?.replayed ? undefined : outcome;
}
