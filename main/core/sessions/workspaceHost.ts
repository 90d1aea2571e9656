import fs from 'node:fs';
import type { EventOf } from '../../common/events.js';
import type { SessionLog } from '../log/sessionLog.js';
import { existingCheckouts, markTurnStarted } from './checkouts.js';
import { DEFAULT_SYSTEM_PROMPT } from '../prompts/system.js';
import type { ProviderKeys } from '../../providers/index.js';
import { createRedactor, type Redactor } from '../../sandbox/redact.js';
import {
  commandFolderOf,
  describeWorkspace,
  homeOf,
  readPersistentConfig,
  type PersistentConfig,
} from './layout.js';

/** How a session's tools see the world: their workspace root, the prompt that explains it, and the box's extra paths. */
export type SessionWorkspace = {
  /** Real path of the tools' workspace root. */
  workspace: string;
  /** True for a session with Persistent Dir checkouts (its workspace is `<dataDir>/workspace`). */
  hasCheckouts: boolean;
  /** Appended to the system prompt (fixed text per configuration); empty for a project-folder session. */
  promptSuffix: string;
  /** Workspace-relative folder commands run in by default: the project checkout, else the root. */
  commandCwd: string;
  /** Workspace-relative globs whose writes need approval: the read-only Persistent Dirs. */
  protectedGlobs: string[];
  /**
   * Host paths a boxed command must read (read-only): the git folder of worktree checkouts and the
   * dependency folders the checkouts link to. Carried on the tool context as `boxReadOnly`.
   */
  boxReadOnly: string[];
  /** Host paths a boxed command must not see: the Keel home (this session's workspace is bound back on top). */
  boxHidden: string[];
};

/**
 * The workspace of a session for a turn: its layout (readSessionWorkspace) and, with Persistent Dirs, the
 * auto checkouts marked as worked on by a turn, so a turn finished by a host that does not commit is
 * committed before the next reset.
 */
export function sessionWorkspace(
  log: SessionLog,
  created: EventOf<'session_created'>,
  override: string | undefined,
): SessionWorkspace {
  const config = override === undefined ? readPersistentConfig(log.dir) : undefined;
  if (config) markTurnStarted(log.dir, config);
  return layoutOf(log, created, override, config);
}

/**
 * The workspace of a session seen from outside a turn (a terminal, an approval preview): with Persistent
 * Dirs, `<dataDir>/workspace` (session/ + persistent/<name>/); without (`--commit direct`, sessions
 * from before), its project folder itself; `override` wins over both. Marks nothing: the only
 * write is creating a checkout session's workspace folder. Throws when the folder is gone.
 */
export function readSessionWorkspace(
  log: SessionLog,
  created: EventOf<'session_created'>,
  override?: string,
): SessionWorkspace {
  return layoutOf(log, created, override, override === undefined ? readPersistentConfig(log.dir) : undefined);
}

function layoutOf(
  log: SessionLog,
  created: EventOf<'session_created'>,
  override: string | undefined,
  config: PersistentConfig | undefined,
): SessionWorkspace {
  if (!config) {
    return {
      workspace: fs.realpathSync(override ?? created.projectFolder),
      hasCheckouts: false,
      promptSuffix: '',
      commandCwd: '.',
      protectedGlobs: [],
      boxReadOnly: [],
      boxHidden: [],
    };
  }
  fs.mkdirSync(log.workspaceDir, { recursive: true });
  return {
    workspace: fs.realpathSync(log.workspaceDir),
    hasCheckouts: true,
    promptSuffix: `\n\n${describeWorkspace(config)}`,
    commandCwd: commandFolderOf(config),
    protectedGlobs: config.readOnly.map((name) => `persistent/${name}/**`),
    boxReadOnly: existingCheckouts(log.dir, config).flatMap((checkout) => checkout.boxReadOnlyPaths()),
    boxHidden: [fs.realpathSync(homeOf(log.dir))],
  };
}

/**
 * The system prompt a session's requests carry: its pinned prompt (or Keel's default) plus, for a session
 * with Persistent Dirs, the workspace description. What `keel payload` and a manual compaction must use to
 * match the requests a turn sends.
 */
export function systemPromptFor(dataDir: string, created: EventOf<'session_created'>): string {
  const config = readPersistentConfig(dataDir);
  const base = created.systemPrompt ?? DEFAULT_SYSTEM_PROMPT;
  return config ? `${base}\n\n${describeWorkspace(config)}` : base;
}

/**
 * The redactor of a session's tool output: the workspace's .env values, the environment's secrets and
 * Keel's own API keys (named `keel:<provider>`), so no command or terminal shows them.
 */
export function sessionRedactor(workspace: string, env: NodeJS.ProcessEnv, keys: ProviderKeys): Redactor {
  const extraSecrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(keys))
    if (typeof value === 'string') extraSecrets[`keel:${name}`] = value;
  return createRedactor({ workspaceRoot: workspace, env, extraSecrets });
}
