import fs from 'node:fs';
import path from 'node:path';
import { RequestError, type SessionInfo, type SessionModeState } from '@agentclientprotocol/sdk';
import { systemClock } from '../common/clock.js';
import { Policy, ProviderKind, type SessionEvent } from '../common/events.js';
import {
  applyPlanMode,
  changePolicy,
  chooseModel,
  type Harness,
  HarnessError,
  homeStoredKeys,
  ModelChoiceError,
  newSessionId,
  openSessionIndex,
  providerKey,
  readPersistentConfig,
  readSettings,
  SessionLog,
  sessionDir,
  toolModeFor,
  withWritableSession,
} from '../core/harness/index.js';
import type { PathView } from './toolCalls.js';

/*
 * Sessions as an editor sees them: every ACP session is an ordinary Keel session (made through the harness's
 * getOrCreate with a checkout of the client's folder, the home's default model and policy), listed in the
 * app and by `keel sessions`; any Keel session, whoever made it, can be listed, loaded and resumed here.
 */

/** The ACP mode of Keel's plan mode (issue #30): not a policy, a state on top of one. */
export const PLAN_MODE_ID = 'plan';

/** Keel's approval policies as ACP session modes, strictest first, then plan mode. */
const MODES: SessionModeState['availableModes'] = [
  { id: 'read-only', name: 'Read only', description: 'Reads and searches; no tool that changes anything.' },
  { id: 'ask', name: 'Ask', description: 'Asks before every change and every command.' },
  { id: 'auto-edit', name: 'Auto edit', description: 'Edits files in the checkout; asks before commands.' },
  { id: 'full-auto', name: 'Full auto', description: 'Edits and runs commands in the box without asking.' },
  {
    id: PLAN_MODE_ID,
    name: 'Plan',
    description:
      'Reads and plans, changes nothing; the plan is yours to approve (with the policy to go on in).',
  },
];

/** The modes with the session's current one: plan while plan mode is on, else its policy. */
export function modesOf(policy: Policy, planMode = false): SessionModeState {
  return { currentModeId: planMode ? PLAN_MODE_ID : policy, availableModes: MODES };
}

/** The providers this home can use now (a key kept in the home or in the environment, or an OpenAI-compatible base URL). */
export function configuredProviders(home: string, env: NodeJS.ProcessEnv): ProviderKind[] {
  const settings = readSettings(home);
  return ProviderKind.options.filter((kind) => {
    // A local model is pinned to a pulled file (keel models local pull): not offered as an editor's sign-in.
    if (kind === 'local') return false;
    if (kind === 'openai-compatible')
      return (
        settings.providers['openai-compatible']?.baseUrl !== undefined ||
        (settings.defaults.provider === kind && settings.defaults.baseUrl !== undefined)
      );
    return providerKey(kind, homeStoredKeys(home), env) !== undefined;
  });
}

/** Checks the client's folder: absolute, existing, a folder; its real path. */
export function clientFolder(cwd: string): string {
  if (!path.isAbsolute(cwd)) throw RequestError.invalidParams({ cwd }, 'cwd must be an absolute path');
  const stat = fs.statSync(cwd, { throwIfNoEntry: false });
  if (!stat?.isDirectory()) throw RequestError.invalidParams({ cwd }, `the folder ${cwd} does not exist`);
  return fs.realpathSync(cwd);
}

/**
 * A new Keel session on a checkout of `folder` (auto commit: the turn's changes reach the folder when it
 * stops), pinned to settings.json's default model (or `provider`, chosen with `authenticate`), with the
 * default policy and network allowlist.
 */
export async function createSession(
  harness: Harness,
  env: NodeJS.ProcessEnv,
  folder: string,
  provider: ProviderKind | undefined,
): Promise<{ id: string; policy: Policy }> {
  const settings = readSettings(harness.home);
  const kind = provider ?? settings.defaults.provider;
  const model = settings.defaults.model;
  if (kind === undefined || model === undefined) {
    throw RequestError.authRequired(
      undefined,
      'Keel has no default model: choose one in the app (Settings) or set defaults.provider and defaults.model in settings.json',
    );
  }
  if (
    kind !== 'openai-compatible' &&
    kind !== 'local' &&
    providerKey(kind, homeStoredKeys(harness.home), env) === undefined
  ) {
    throw RequestError.authRequired(
      undefined,
      `no key for ${kind}: set ${kind === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY'} in the environment the editor starts keel acp with`,
    );
  }
  let pin;
  try {
    ({ pin } = await chooseModel(
      {
        provider: kind,
        model,
        ...(settings.defaults.baseUrl && kind === settings.defaults.provider
          ? { baseUrl: settings.defaults.baseUrl }
          : {}),
        ...(settings.contextWindows[model] ? { contextWindow: settings.contextWindows[model] } : {}),
      },
      { home: harness.home, clock: systemClock, keys: homeStoredKeys(harness.home), env },
    ));
  } catch (error) {
    if (error instanceof ModelChoiceError) throw RequestError.invalidParams(undefined, error.message);
    throw error;
  }
  const policy = settings.defaults.policy ?? 'ask';
  const { id } = await harness.sessions.getOrCreate({
    id: newSessionId(),
    create: {
      model: pin,
      persistentDirs: { project: { path: folder, commit: 'auto' } },
      policy,
      toolMode: toolModeFor(policy),
      networkAllow: settings.defaults.networkAllow ?? [],
    },
  });
  return { id, policy };
}

/** What a loaded session is: its events (read-only), its project folder, policy and model window. */
export type LoadedSession = {
  events: SessionEvent[];
  created: Extract<SessionEvent, { kind: 'session_created' }>;
  policy: Policy;
  /** Plan mode is on (issue #30): the session's mode is `plan`. */
  planMode: boolean;
  contextWindow: number;
  view: PathView;
};

/** Reads a session without taking its lease (the app may be running it). */
export function readSession(home: string, id: string): LoadedSession {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(id) || !fs.existsSync(sessionDir(home, id)))
    throw RequestError.sessionNotFound(id);
  const log = SessionLog.open(home, id, { write: false });
  try {
    const events = log.read();
    const created = events[0];
    if (created?.kind !== 'session_created') throw RequestError.sessionNotFound(id);
    let policy: Policy = created.policy;
    let planMode = false;
    let contextWindow = created.contextWindow;
    for (const event of events) {
      // An approved plan (issue #30) sets the policy too, and ends plan mode.
      if (event.kind === 'policy_changed' || event.kind === 'plan_approved') policy = event.policy;
      if (event.kind === 'plan_mode_changed') planMode = event.active;
      if (event.kind === 'plan_approved') planMode = false;
      if (event.kind === 'model_changed') contextWindow = event.contextWindow;
    }
    return { events, created, policy, planMode, contextWindow, view: pathViewOf(home, created) };
  } finally {
    log.close();
  }
}

/** The project folder and the roots the model's paths start at (its checkout, else the folder itself). */
function pathViewOf(home: string, created: LoadedSession['created']): PathView {
  const dir = sessionDir(home, created.sessionId);
  // A checkout session's files are read in its checkout (made at its first turn), where the tools write.
  const onCheckout = readPersistentConfig(dir)?.dirs.some((d) => d.name === 'project') === true;
  const checkout = path.join(fs.realpathSync(dir), 'workspace', 'persistent', 'project');
  return {
    project: created.projectFolder,
    roots: onCheckout ? [checkout, created.projectFolder] : [created.projectFolder],
  };
}

const PAGE = 50;

/** One page of the home's sessions (children under their parents are left out), newest first. */
export function listSessions(
  home: string,
  cwd: string | undefined,
  cursor: string | undefined,
): { sessions: SessionInfo[]; nextCursor?: string } {
  const offset = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isInteger(offset) || offset < 0)
    throw RequestError.invalidParams({ cursor }, 'cursor is not one this agent gave');
  const index = openSessionIndex(home);
  try {
    const rows = index.list({
      limit: PAGE + 1,
      offset,
      ...(cwd !== undefined ? { projectFolder: realOrSame(cwd) } : {}),
    });
    const sessions = rows
      .slice(0, PAGE)
      .filter((row) => row.parentId === undefined)
      .map((row) => ({
        sessionId: row.id,
        cwd: row.projectFolder,
        ...(row.title ? { title: row.title } : {}),
        updatedAt: row.updatedAt,
      }));
    return { sessions, ...(rows.length > PAGE ? { nextCursor: String(offset + PAGE) } : {}) };
  } finally {
    index.close();
  }
}

function realOrSame(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    return folder;
  }
}

/**
 * Switches the session's mode: `plan` turns Keel's plan mode on (a `plan_mode_changed`, as the app's toggle
 * and `keel run --plan` record it; refused for a read-only session or while a plan waits); a policy turns plan
 * mode off first, then records the policy (a `policy_changed`, as `keel policy` does: core/harness). Returns
 * the mode now current.
 */
export async function setMode(home: string, id: string, modeId: string): Promise<string> {
  const policy = Policy.safeParse(modeId);
  if (modeId !== PLAN_MODE_ID && !policy.success)
    throw RequestError.invalidParams(
      { modeId },
      'unknown mode: use read-only, ask, auto-edit, full-auto or plan',
    );
  await withWritableSession(home, id, (log) => {
    const [created] = log.read({ fromSeq: 1, limit: 1 });
    if (created?.kind !== 'session_created') throw RequestError.sessionNotFound(id);
    try {
      applyPlanMode(log, modeId === PLAN_MODE_ID);
      if (policy.success) changePolicy(log, policy.data);
    } catch (error) {
      if (error instanceof HarnessError) throw RequestError.invalidParams({ modeId }, error.message);
      throw error;
    }
    return Promise.resolve();
  });
  return modeId;
}
