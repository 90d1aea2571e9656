import type { EventOf, NewEvent, SessionEvent } from '../../common/events.js';
import type { ProviderKeys } from '../../providers/index.js';
import { detectSandbox } from '../../sandbox/box.js';
import { hooksOf } from '../hooks/config.js';
import type { HookOutcome, HookScope } from '../hooks/run.js';
import type { SessionLog } from '../log/sessionLog.js';
import { homeOf } from '../paths.js';
import { defaultUserHome, loadSetup } from '../setup/index.js';
import { preCompactHooks } from '../turn/hookSteps.js';
import { applyEvent, type SessionState } from '../turn/state.js';
import { readSessionWorkspace, sessionRedactor, toolContextFor } from './workspace.js';

/*
 * Issue #30: the user's hooks outside a turn. A compaction the user asks for (`keel compact`, the app) runs the
 * PreCompact hooks with trigger `manual`, in the same box a turn's hooks get (the session's folder, its network
 * policy, Keel's home hidden), with the same setup files (the user's, the project's approved ones).
 */

/** What running the manual PreCompact hooks needs besides the log. */
export type ManualHookOptions = {
  env: NodeJS.ProcessEnv;
  keys?: ProviderKeys;
  onNotice?: (text: string) => void;
  /** What the user asked the summary to keep (Claude Code's `/compact <instructions>`): `custom_instructions`. */
  instructions?: string;
};

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
  const lifecycleHooks = hooksOf(
    loadSetup({
      home: homeOf(log.dir),
      userHome: defaultUserHome(options.env),
      project: created.projectFolder,
    }),
  ).filter((hook) => hook.event === 'PreCompact');
  if (lifecycleHooks.length === 0) return undefined;
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
      lifecycleHooks,
      ...(options.onNotice ? { hooks: { onNotice: options.onNotice } } : {}),
    },
    state,
    append: (event: NewEvent): SessionEvent => {
      const appended = log.append(event, { expectedLastSeq: state.lastSeq });
      if (!appended.ok) throw new Error('the session changed while its PreCompact hooks ran: try again');
      const written = appended.events[0] as SessionEvent;
      applyEvent(state, written);
      return written;
    },
  };
  return preCompactHooks(scope, 'manual', options.instructions ?? '');
}
