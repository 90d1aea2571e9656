import fs from 'node:fs';
import path from 'node:path';
import type { EventOf } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { sessionNetworkAllow } from '../log/imported.js';
import { readSessionWorkspace, sessionRedactor, toolContextFor, type SessionWorkspace } from './workspace.js';
import { type ProviderKeys } from '../../providers/index.js';
import { detectSandbox, type SandboxInfo } from '../../sandbox/box.js';
import { type Redactor } from '../../sandbox/redact.js';
import { readOnlyPathsFor, extraWritablePaths } from '../../tools/runCommandTool.js';
import type { ToolArea, ToolContext } from '../../tools/types.js';
import { HarnessError } from './errors.js';
import { mountViews } from '../persistent/turnCheckouts.js';

/**
 * The box a session's tools run in, seen from outside a turn: what the approval panel shows about a command
 * and what an interactive terminal is opened in. The layout createTurnHost uses (readSessionWorkspace), without
 * marking the checkouts as written by a turn.
 */
export type SessionBox = {
  created: EventOf<'session_created'>;
  /** Real path of the box's writable folder: `<dataDir>/workspace` with checkouts, else the project folder. */
  workspace: string;
  /** Real path of the tools' root: the project's checkout or folder (the box itself for a checkout session from before). */
  root: string;
  /** The folders the tools' paths name by prefix (`/session`, `/persistent/<name>`). */
  areas: ToolArea[];
  /** Folder, relative to `root`, commands start in. */
  commandCwd: string;
  /** True for a session with Persistent Dir checkouts. */
  hasCheckouts: boolean;
  /** Globs relative to `root` whose writes need approval besides the built-in names. */
  protectedGlobs: string[];
  /** Absolute paths writable inside the box. */
  writable: string[];
  /** Absolute paths kept read-only inside the box (protected folders, the checkouts' git and dependency folders). */
  readOnly: string[];
  /** Absolute paths hidden in the box (the Keel home; the workspace is bound back on top). */
  hidden: string[];
  networkAllow: string[];
  sandbox: SandboxInfo;
  redactor: Redactor;
  /** The tools' context in this box, as a turn builds it (`toolContextFor`): what a preview plans a call with. */
  tools: Omit<ToolContext, 'idempotencyKey'>;
};

/** Reads a session's box. Needs the log (read-only is enough); writes nothing. `invalid_state` when the project folder is gone. */
export async function readSessionBox(
  log: SessionLog,
  options: { env: NodeJS.ProcessEnv; keys: ProviderKeys },
): Promise<SessionBox> {
  const [created] = log.read({ fromSeq: 1, limit: 1 });
  if (created?.kind !== 'session_created') {
    throw new HarnessError('invalid_state', `session ${log.id} has no session_created event`);
  }
  // A view's files are reached through its holder: mounted here first (a turn mounts them at its start).
  await mountViews(log.dir);
  let layout: SessionWorkspace;
  try {
    layout = readSessionWorkspace(log, created);
  } catch {
    throw new HarnessError(
      'invalid_state',
      `the project folder ${created.projectFolder} no longer exists: the session is read-only`,
    );
  }
  const workspace = layout.boxRoot;
  const sandbox = await detectSandbox();
  const redactor = sessionRedactor(workspace, options.env, options.keys);
  return {
    created,
    workspace,
    root: layout.workspace,
    areas: layout.areas,
    commandCwd: layout.commandCwd,
    hasCheckouts: layout.hasCheckouts,
    protectedGlobs: [...(created.protectedGlobs ?? []), ...layout.protectedGlobs],
    writable: [workspace, ...extraWritablePaths(workspace, layout.areas)],
    readOnly: [...readOnlyPathsFor(workspace), ...layout.boxReadOnly],
    hidden: layout.boxHidden,
    networkAllow: sessionNetworkAllow(created),
    sandbox,
    redactor,
    tools: toolContextFor(layout, created, {
      sessionDir: log.dir,
      artifactsDir: log.artifactsDir,
      redactor,
      sandbox,
    }),
  };
}

/** Where a user's shell starts: where the session's commands start (the project), else the tools' root. */
export function shellStartFolder(box: SessionBox): string {
  const start = path.resolve(box.root, box.commandCwd);
  return fs.existsSync(start) ? start : box.root;
}
