import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { CommandUse } from '../../common/customEvents.js';
import { Policy, ProviderKind, type ModelPin } from '../../common/events.js';
import {
  AttachmentError,
  type AttachmentInput,
  asDiskFull,
  commandModelFor,
  type ExpandedPrompt,
  expandPrompt,
  expandSessionPrompt,
  checkAttachments,
  checkPromptSize,
  checkSessionPrompt,
  guardNewTurn,
  type Harness,
  type LocalHarnessSession,
  localModelPin,
  newSessionId,
  pendingApprovals,
  readPersistentConfig,
  readSettings,
  type SessionSetup,
  suggestedLocalModel,
  toolModeFor,
  withWritableSession,
  writePersistentConfig,
  planUploads,
  stageUploads,
  uploadFromFile,
  type UploadInput,
  uploadsNote,
} from '../../core/harness/index.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { parseEffort } from './reasoning.js';
import { budgetFromFlags } from './budget.js';
import { chooseCliModel } from '../models.js';
import { cliHarness, cliSession, describeApproval, driveTurn } from '../turn.js';
import { ExitCode } from '../exitCodes.js';
import { withSessionLog } from '../session.js';

type RunOptions = {
  project?: string;
  session?: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  policy?: string;
  contextWindow?: number;
  allowHost?: string[];
  title?: string;
  json?: boolean;
  maxSteps?: number;
  commit?: string;
  reasoning?: string;
  showReasoning?: boolean;
  budgetUsd?: string;
  budgetTokens?: string;
  image?: string[];
  file?: string[];
  plan?: boolean;
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * How a session works on its project folder: `auto` and `manual` on a checkout (the model's root)
 * whose changes reach the folder when the turn stops, or when `keel commit` applies them; `direct` in the
 * folder itself.
 */
export type CommitMode = 'auto' | 'manual' | 'direct';

/** Checks `--commit` before anything is created: auto, manual, direct, or not given. */
export function parseCommitMode(mode: string | undefined): CommitMode | undefined {
  if (mode === undefined) return undefined;
  if (mode === 'auto' || mode === 'manual' || mode === 'direct') return mode;
  throw new CliError(`--commit must be auto, manual or direct (got "${mode}")`);
}

/**
 * `keel run --project DIR [--session ID] [--provider P] [--model M] [--base-url URL] [--policy P]
 * [--context-window N] [--commit auto|manual|direct] [--json] PROMPT`: one user turn, streamed, through the
 * session API. A new session pins provider, model, base URL and context window and works on a checkout of
 * DIR (`--commit auto` by default); `--session` continues one and needs no provider flags.
 */
export function registerRun(program: Command, context: CliContext): void {
  program
    .command('run')
    .description('run one user turn: create a session on a project folder, or continue one with --session')
    .argument('<prompt...>', 'what to ask the agent')
    .option('--project <dir>', 'the project folder the session works on (new sessions)')
    .option('--session <id>', 'continue this session instead of creating one')
    .option('--provider <provider>', 'anthropic | openai | openai-compatible (new sessions)')
    .option('--model <model>', 'model id (new sessions)')
    .option('--base-url <url>', 'provider base URL, e.g. http://127.0.0.1:11434/v1 for Ollama (new sessions)')
    .option('--policy <policy>', 'read-only | ask | auto-edit | full-auto (new sessions; default ask)')
    .option('--context-window <tokens>', 'context window of a model Keel does not know', parsePositiveInteger)
    .option('--allow-host <host>', 'let commands reach this host through the proxy (repeatable)', collect)
    .option('--title <title>', 'a title for the new session')
    .option('--max-steps <n>', 'model requests this turn may make (default 50)', parsePositiveInteger)
    .option('--reasoning <effort>', "off | low | medium | high (new sessions; default: the model's own)")
    .option(
      '--budget-usd <amount>',
      "the session's USD spend cap (new sessions; default settings' defaults.budget)",
    )
    .option('--budget-tokens <count>', "the session's token spend cap (new sessions)")
    .option('--show-reasoning', "print the model's reasoning, dimmed, on stderr as it streams")
    .option('--json', 'print deltas, events, commits and the outcome as JSON lines')
    .option(
      '--plan',
      'plan mode: the model reads and presents a plan, then the turn waits (exit 3) for keel plan --approve / --reject',
    )
    .option(
      '--image <file>',
      'attach an image (PNG, JPEG, GIF, WebP) or a PDF to the prompt (repeatable)',
      collect,
    )
    .option(
      '--file <file>',
      'stage a file into the session at /session/uploads/NAME and name it in the prompt (repeatable)',
      collect,
    )
    .option(
      '--commit <mode>',
      "auto (default): the session works on a checkout of the project folder (the model's root) and the " +
        "turn's changes reach the folder when the turn stops; manual: they wait for keel commit; " +
        'direct: work in the folder itself (new sessions). On --session: switches a checkout between auto and manual',
    )
    .action(async (words: string[], options: RunOptions) => {
      const prompt = words.join(' ');
      if (prompt.trim() === '') throw new CliError('the prompt is empty');
      const mode = parseCommitMode(options.commit);
      // Read and checked before a session is made: a wrong file costs nothing.
      const attachments = readAttachmentFiles(options.image ?? []);
      const uploads = readUploadFiles(options.file ?? []);
      if (options.session !== undefined) {
        const pinFlags = [
          'provider',
          'model',
          'baseUrl',
          'contextWindow',
          'policy',
          'project',
          'reasoning',
          'budgetUsd',
          'budgetTokens',
        ] as const;
        const given = pinFlags.filter((flag) => options[flag] !== undefined);
        if (given.length > 0) {
          throw new CliError(
            `--session continues a session with its pinned model and policy; drop --${given
              .map((g) => g.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))
              .join(
                ', --',
              )} (switch models with keel model, policies with keel policy, reasoning with keel reasoning, caps with keel budget)`,
          );
        }
        const harness = cliHarness(context);
        const session = await cliSession(harness, options.session);
        // A prompt while a request waits would be appended and then stop at that request: refuse it first.
        const pending = withSessionLog(harness.home, session.id, (log) => pendingApprovals(log.read()));
        if (pending.length > 0) {
          context.io.stderr(
            `keel: session ${session.id} is waiting for an approval; nothing was added. Answer it, then run again:\n`,
          );
          for (const request of pending)
            for (const line of describeApproval(session.id, request)) context.io.stderr(`${line}\n`);
          context.setExitCode(ExitCode.awaitingApproval);
          return;
        }
        // A custom command expands here (the expanded prompt is what the log records); refused before anything moves.
        const expanded = await expandSessionPrompt(session, prompt, context.io.env);
        for (const note of expanded.notes) context.io.stderr(`keel: ${note}\n`);
        if (mode !== undefined) await switchCommitMode(harness, session, mode);
        await checkSessionPrompt(session, expanded.prompt);
        await guardNewTurn(session);
        const note = uploadsNote(await stageUploads(session.files, uploads));
        const input = { ...turnInput(expanded), attachments };
        await driveTurn(context, harness, session.id, { ...input, prompt: input.prompt + note }, options);
        return;
      }
      // Every flag is checked before the harness makes the home or anything in it.
      const expanded = await expandNewSessionPrompt(context, options, prompt);
      const setup = await newSessionSetup(context, options, mode ?? 'auto');
      // Before the session exists: a prompt the model's window cannot take leaves nothing behind.
      if (setup.model?.contextWindow !== undefined)
        await checkPromptSize(expanded.prompt, { ...setup.model, contextWindow: setup.model.contextWindow });
      const harness = cliHarness(context);
      const created = await harness.sessions.getOrCreate({
        id: newSessionId(),
        ...(options.title ? { title: options.title } : {}),
        create: setup,
      });
      const { id } = created;
      if (!options.json) context.io.stderr(`keel: session ${id}\n`);
      try {
        const note = uploadsNote(await stageUploads(created.files, uploads));
        const input = { ...turnInput(expanded), attachments };
        await driveTurn(context, harness, id, { ...input, prompt: input.prompt + note }, options);
      } catch (error) {
        // The session exists now: a full disk's message names it, and says whether its prompt was recorded.
        throw asDiskFull(error, harness.home, {
          sessionId: id,
          ...(promptRecorded(harness.home, id) ? {} : { stage: 'open' }),
        });
      }
    });
}

/** A turn's input from an expanded prompt: the text recorded, and the command it came from. */
function turnInput(expanded: ExpandedPrompt): { prompt: string; command?: CommandUse } {
  return { prompt: expanded.prompt, ...(expanded.command ? { command: expanded.command } : {}) };
}

/**
 * A new session's prompt, a custom command expanded: the command's `model:` becomes the session's model when
 * no --model was given (a new session is pinned to it from its first event); a --model that differs is refused.
 */
async function expandNewSessionPrompt(
  context: CliContext,
  options: RunOptions,
  prompt: string,
): Promise<ExpandedPrompt> {
  if (options.project === undefined)
    throw new CliError('a new session needs --project DIR (or continue one with --session ID)');
  const expanded = await expandPrompt({
    home: context.home(),
    env: context.io.env,
    project: path.resolve(options.project),
    text: prompt,
    // An MCP prompt's server reaches the hosts the new session will allow.
    networkAllow: options.allowHost ?? readSettings(context.home()).defaults.networkAllow ?? [],
  });
  for (const note of expanded.notes) context.io.stderr(`keel: ${note}\n`);
  const provider = ProviderKind.safeParse(options.provider ?? readSettings(context.home()).defaults.provider);
  if (expanded.command?.model !== undefined && provider.success) {
    const model = commandModelFor(expanded.command, provider.data);
    if (options.model !== undefined && options.model !== model) {
      throw new CliError(
        `/${expanded.command.name} asks for model "${expanded.command.model}" (${expanded.command.shown}) and --model says ${options.model}: drop one`,
      );
    }
    options.model = model;
  }
  return expanded;
}

/** `--image` files read and checked by their bytes (attachments.ts); a problem is the CLI's one-line error. */
function readAttachmentFiles(files: readonly string[]): AttachmentInput[] {
  const inputs = files.map((file) => {
    let data: Buffer;
    try {
      data = fs.readFileSync(path.resolve(file));
    } catch (error) {
      throw new CliError(`--image ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { name: path.basename(file), data };
  });
  try {
    checkAttachments(inputs);
  } catch (error) {
    if (error instanceof AttachmentError) throw new CliError(`--image: ${error.message}`);
    throw error;
  }
  return inputs;
}

/** `--file` files: regular files within the size bound, their staged names planned (uploads.ts); else a one-line error. */
function readUploadFiles(files: readonly string[]): UploadInput[] {
  try {
    const inputs = files.map((file) => uploadFromFile(path.resolve(file)));
    planUploads(inputs);
    return inputs;
  } catch (error) {
    throw new CliError(`--file: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Whether the new session's log holds its prompt (true when it cannot be read: then resume is the advice). */
function promptRecorded(home: string, id: string): boolean {
  try {
    return withSessionLog(home, id, (log) => log.countOfKind('user_message') > 0);
  } catch {
    return true;
  }
}

/** A new session's setup from the flags and settings.json's defaults; each problem is one line. */
async function newSessionSetup(
  context: CliContext,
  options: RunOptions,
  mode: CommitMode,
): Promise<SessionSetup> {
  const home = context.home();
  if (options.project === undefined)
    throw new CliError('a new session needs --project DIR (or continue one with --session ID)');
  const project = path.resolve(options.project);
  if (!fs.existsSync(project) || !fs.statSync(project).isDirectory()) {
    throw new CliError(`the project folder ${project} does not exist or is not a folder`);
  }
  const settings = readSettings(home);
  const policy = Policy.safeParse(options.policy ?? settings.defaults.policy ?? 'ask');
  // The policy is checked after the model flags and before the provider is asked about the model.
  const pin = await modelPinFromFlags(context, options, () => {
    if (!policy.success)
      throw new CliError(`unknown policy "${options.policy}": use read-only, ask, auto-edit or full-auto`);
  });
  if (!policy.success) throw new CliError(`unknown policy "${options.policy}"`);
  const reasoningEffort =
    options.reasoning === undefined ? undefined : parseEffort(options.reasoning, pin.model);
  const networkAllow = options.allowHost ?? settings.defaults.networkAllow ?? [];
  const budget = budgetFromFlags(options);
  const folder = fs.realpathSync(project);
  return {
    ...(budget ? { budget } : {}),
    model: { ...pin, ...(reasoningEffort ? { reasoningEffort } : {}) },
    ...(mode === 'direct'
      ? { projectFolder: folder }
      : { persistentDirs: { project: { path: folder, commit: mode } } }),
    policy: policy.data,
    toolMode: toolModeFor(policy.data),
    networkAllow,
  };
}

/** The flags that choose a new session's model (keel run, keel eval). */
export type ModelFlags = { provider?: string; model?: string; baseUrl?: string; contextWindow?: number };

/**
 * The model a new session is pinned to, from the flags and settings.json's defaults: the provider's word on
 * it decides, the catalogue only warns. Each problem is one line naming the flag that fixes it;
 * `checkOtherFlags` runs once the model flags are valid, before the provider is asked.
 */
export async function modelPinFromFlags(
  context: CliContext,
  options: ModelFlags,
  checkOtherFlags: () => void = () => undefined,
): Promise<ModelPin> {
  const settings = readSettings(context.home());
  const providerText = options.provider ?? settings.defaults.provider;
  if (providerText === undefined) {
    // Issue 34: without a key or a server, the local default is one command away.
    const local = suggestedLocalModel().id;
    throw new CliError(
      `choose a provider: --provider anthropic|openai|openai-compatible|local (or set defaults in settings.json); ` +
        `with no key or server: keel models local pull ${local}, then keel run --provider local --model ${local}`,
    );
  }
  const provider = ProviderKind.safeParse(providerText);
  if (!provider.success)
    throw new CliError(
      `unknown provider "${providerText}": use anthropic, openai, openai-compatible or local`,
    );
  const model = options.model ?? settings.defaults.model;
  if (model === undefined)
    throw new CliError('choose a model: --model ID (or set defaults.model in settings.json)');
  checkOtherFlags();
  if (provider.data === 'local') {
    try {
      return await localModelPin(context.home(), model, options.contextWindow, settings.providers.local);
    } catch (error) {
      throw new CliError(error instanceof Error ? error.message : String(error));
    }
  }
  const { pin } = await chooseCliModel(context, {
    provider: provider.data,
    model,
    ...(options.baseUrl !== undefined ? { baseUrl: options.baseUrl } : {}),
    ...(options.contextWindow !== undefined ? { contextWindow: options.contextWindow } : {}),
  });
  return pin;
}

/**
 * `--commit` on a continued session: switches its project checkout between auto and manual (under the
 * session's lease, so no turn reads the configuration meanwhile). A session working in its folder directly
 * stays so, and a checkout never becomes direct.
 */
async function switchCommitMode(harness: Harness, session: LocalHarnessSession, mode: CommitMode) {
  const direct = session.persistentDirs().length === 0;
  if (direct) {
    if (mode === 'direct') return;
    throw new CliError(
      `session ${session.id} works on its project folder directly; --commit ${mode} applies to new sessions (keel run --project DIR --commit ${mode})`,
    );
  }
  if (mode === 'direct') {
    throw new CliError(
      `session ${session.id} works on a checkout of its project folder; --commit direct applies to new sessions (keel run --project DIR --commit direct)`,
    );
  }
  await withWritableSession(harness.home, session.id, (log) => {
    const config = readPersistentConfig(log.dir);
    if (config) {
      writePersistentConfig(log.dir, {
        ...config,
        dirs: config.dirs.map((dir) => (dir.name === 'project' ? { ...dir, commit: mode } : dir)),
      });
    }
    return Promise.resolve();
  });
}
