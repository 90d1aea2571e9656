import type { CommandUse } from '../../common/customEvents.js';
import type { ModelPin } from '../../common/events.js';
import { customSetupOf } from '../custom/fromSetup.js';
import { expandCommand, resolveModelName, splitCommandLine, UnknownCommandError } from '../custom/expand.js';
import type { CustomSetup } from '../custom/index.js';
import { defaultUserHome, loadSetup, type LoadedSetup } from '../setup/index.js';
import { SessionLog } from '../log/sessionLog.js';
import { homeOf } from '../paths.js';
import { loadSessionState } from '../turn/loadState.js';
import { HarnessError } from './errors.js';
import { expandMcpPrompt, McpAdminError, readMcpResourceBlocks } from '../mcp/admin.js';
import { mcpResourceMentions } from '../mcp/resourceMentions.js';
import { parseMcpPromptCommandName } from '../mcp/prompts.js';
import { sessionNetworkAllow } from '../log/imported.js';
import type { LocalHarnessSession } from './harness.js';

/** Where a session's (or a new session's) setup is read: Keel's home (trust), the environment (`~`), the project. */
export type SetupPlace = { home: string; env?: NodeJS.ProcessEnv; project?: string };

/**
 * The skills, commands and agents in effect for a project: the user's own, and the project's approved by hash
 * (main/core/setup; an unapproved or changed project file has no effect), each malformed file a problem.
 */
export function readCustomSetup(place: SetupPlace): CustomSetup {
  return customSetupOf(loadPlace(place));
}

function loadPlace(place: SetupPlace): LoadedSetup {
  return loadSetup({
    home: place.home,
    userHome: defaultUserHome(place.env ?? process.env),
    ...(place.project ? { project: place.project } : {}),
  });
}

/** One entry of the composer's `/` menu (the lead wires it next to the built-in commands and MCP prompts). */
export type PromptCommand = {
  name: string;
  description: string;
  argumentHint?: string;
  scope: 'user' | 'project';
  /** The file it comes from, as people see it. */
  shown: string;
};

/** The custom commands a prompt may start with (`/name args`), sorted by name. */
export function promptCommands(place: SetupPlace): PromptCommand[] {
  return readCustomSetup(place).commands.map((command) => ({
    name: command.name,
    description: command.description,
    ...(command.argumentHint ? { argumentHint: command.argumentHint } : {}),
    scope: command.scope,
    shown: command.shown,
  }));
}

/** A prompt as a turn takes it: the text to record and, when it came from a command, that command's use. */
export type ExpandedPrompt = { prompt: string; command?: CommandUse; notes: string[] };

/**
 * Expands a prompt that starts with `/name` into the command's prompt (`$ARGUMENTS`, `$1`…`$9`), or
 * `/mcp__server__prompt words` into the MCP prompt filled by its server; then appends the contents of the MCP
 * resources it attaches (`@mcp:server:uri`, each an `<mcp-resource server uri>` block). Any other prompt is
 * returned as it is. `pin`: the session's model; a command whose `model:` names another one is
 * refused (a session's model is pinned so its log replays the same way; switch it with `keel model` first, or
 * give the command to a new session, which is created with it). Refusals are HarnessErrors (`not_found`,
 * `invalid_state`) a host words as it likes.
 */
export async function expandPrompt(place: PromptPlace): Promise<ExpandedPrompt> {
  const expanded = await expandCommandText(place);
  // `@mcp:server:uri` (typed, or expanded from a command): the resources' contents go with the message.
  const wanted = mcpResourceMentions(expanded.prompt);
  if (wanted.length === 0) return expanded;
  try {
    const blocks = await readMcpResourceBlocks(place.home, place.project, wanted, mcpOptions(place));
    return { ...expanded, prompt: [expanded.prompt, ...blocks].join('\n\n') };
  } catch (error) {
    if (error instanceof McpAdminError) throw new HarnessError('invalid_input', error.message);
    throw error;
  }
}

type PromptPlace = SetupPlace & { text: string; pin?: ModelPin; networkAllow?: readonly string[] };

const mcpOptions = (place: PromptPlace) => ({
  ...(place.env ? { env: place.env } : {}),
  ...(place.networkAllow?.length ? { networkAllow: place.networkAllow } : {}),
});

async function expandCommandText(place: PromptPlace): Promise<ExpandedPrompt> {
  const mcp = mcpPromptCall(place.text);
  if (mcp) {
    // An MCP server's prompt (`/mcp__server__prompt words`): its filled messages are the prompt recorded.
    try {
      const prompt = await expandMcpPrompt(place.home, place.project, mcp, mcpOptions(place));
      return { prompt, notes: [] };
    } catch (error) {
      if (error instanceof McpAdminError) throw new HarnessError('invalid_input', error.message);
      throw error;
    }
  }
  let expansion;
  const loaded = loadPlace(place);
  try {
    expansion = expandCommand(customSetupOf(loaded).commands, place.text);
  } catch (error) {
    if (!(error instanceof UnknownCommandError)) throw error;
    // The project may define it in a file the user has not approved (or changed since): say so.
    const typed = splitCommandLine(place.text)?.name ?? '';
    const waiting = loaded.untrusted.find(
      (file) =>
        file.kind === 'command' &&
        [file.name, `${file.namespace.split('/').join(':')}:${file.name}`].includes(typed),
    );
    if (waiting) {
      throw new HarnessError(
        'not_found',
        `/${typed} is defined by the project's ${waiting.relativePath}, which ${waiting.state === 'new' ? 'you have not approved' : 'changed since you approved it'}: ` +
          'a project file has no effect until you approve its exact content (keel trust, or Settings).',
      );
    }
    throw new HarnessError('not_found', error.message);
  }
  if (!expansion) return { prompt: place.text, notes: [] };
  const { command } = expansion;
  if (command.model !== undefined && place.pin !== undefined) {
    const wanted = resolveModelName(command.model, place.pin.provider);
    if (wanted !== place.pin.model) {
      throw new HarnessError(
        'invalid_state',
        `/${command.name} asks for model "${command.model}" (${command.shown}), but this session is pinned to ` +
          `${place.pin.provider}:${place.pin.model}: Keel keeps a session on one model so its log replays the same way. ` +
          `Switch first (keel model SESSION ${place.pin.provider}:${wanted ?? command.model}), run the command in a new session, or remove model: from the file.`,
      );
    }
  }
  return { prompt: expansion.prompt, command, notes: expansion.notes };
}

/**
 * expandPrompt for a turn of an existing session, as every host sends one (the app, `keel run --session`, the
 * editor agent): its home, project folder and pinned model read from its log. A prompt that does not start
 * with `/` is returned as it is, with no file read.
 */
export async function expandSessionPrompt(
  session: LocalHarnessSession,
  text: string,
  env?: NodeJS.ProcessEnv,
): Promise<ExpandedPrompt> {
  if (!text.startsWith('/') && mcpResourceMentions(text).length === 0) return { prompt: text, notes: [] };
  const home = homeOf(session.dataDir);
  const place = readSessionPlace(home, session.id);
  return expandPrompt({ home, ...(env ? { env } : {}), ...place, text });
}

/** What expanding a session's prompt reads from its log: its project, pinned model and allowed hosts. */
export function readSessionPlace(
  home: string,
  sessionId: string,
): { project: string; pin: ModelPin; networkAllow: string[] } {
  const log = SessionLog.open(home, sessionId, { write: false });
  try {
    const state = loadSessionState(log);
    const [created] = log.read({ fromSeq: 1, limit: 1 });
    // An MCP prompt's server reaches what the session's own servers may (an HTTP server its host).
    const networkAllow = created?.kind === 'session_created' ? sessionNetworkAllow(created) : [];
    return { project: state.projectFolder, pin: state.pin, networkAllow };
  } finally {
    log.close();
  }
}

/** The MCP prompt `text` calls (`/mcp__server__prompt words`), or undefined. */
function mcpPromptCall(text: string): { server: string; prompt: string; text: string } | undefined {
  const line = splitCommandLine(text);
  const named = line ? parseMcpPromptCommandName(line.name) : undefined;
  return line && named ? { ...named, text: line.args } : undefined;
}

/**
 * The model a new session takes from a command's `model:` when the host was given none: the id, or the alias
 * resolved for the provider. Undefined when the command names none.
 */
export function commandModelFor(
  command: CommandUse | undefined,
  provider: ModelPin['provider'],
): string | undefined {
  if (command?.model === undefined) return undefined;
  const resolved = resolveModelName(command.model, provider);
  if (resolved === undefined) {
    throw new HarnessError(
      'invalid_input',
      `/${command.name} asks for model "${command.model}", which means nothing for ${provider}; pass --model`,
    );
  }
  return resolved;
}
