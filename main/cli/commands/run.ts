import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { Policy, ProviderKind } from '../../core/log/events.js';
import { SessionLog } from '../../core/log/sessionLog.js';
import { resolveContextWindow } from '../../providers/catalogue.js';
import { readSettings } from '../../store/settings.js';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { driveTurn } from '../turn.js';
import { applyCommitOption, finishCliTurn, parseCommitOption, prepareCliTurn } from './commit.js';

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
};

const collect = (value: string, previous: string[] = []) => [...previous, value];

/**
 * `keel run --project DIR [--session ID] [--provider P] [--model M] [--base-url URL] [--policy P]
 * [--context-window N] [--json] PROMPT`: one user turn, streamed. A new session pins provider, model,
 * base URL and context window; `--session` continues one and needs no provider flags.
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
    .option('--json', 'print deltas, events and the outcome as JSON lines')
    .option(
      '--commit <mode>',
      'work on a checkout (persistent/project/) of the project folder: auto applies the changes when the turn ends, ' +
        'manual waits for keel commit (default: work in the folder itself)',
    )
    .action(async (words: string[], options: RunOptions) => {
      const home = context.home();
      const prompt = words.join(' ');
      if (prompt.trim() === '') throw new CliError('the prompt is empty');
      const commit = parseCommitOption(options.commit);
      if (options.session !== undefined) {
        const pinFlags = ['provider', 'model', 'baseUrl', 'contextWindow', 'policy', 'project'] as const;
        const given = pinFlags.filter((flag) => options[flag] !== undefined);
        if (given.length > 0) {
          throw new CliError(
            `--session continues a session with its pinned model and policy; drop --${given
              .map((g) => g.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))
              .join(', --')} (switch models with keel model, policies with keel policy)`,
          );
        }
        const log = SessionLog.open(home, options.session, { write: true });
        try {
          applyCommitOption(log, commit, { newSession: false });
          await prepareCliTurn(context, log, options);
          await driveTurn(context, log, { prompt }, options);
          await finishCliTurn(context, log, options);
        } finally {
          log.close();
        }
        return;
      }
      const log = createSession(home, options);
      try {
        if (!options.json) context.io.stderr(`keel: session ${log.id}\n`);
        applyCommitOption(log, commit, { newSession: true });
        await prepareCliTurn(context, log, options);
        await driveTurn(context, log, { prompt }, options);
        await finishCliTurn(context, log, options);
      } finally {
        log.close();
      }
    });
}

function createSession(home: string, options: RunOptions): SessionLog {
  if (options.project === undefined)
    throw new CliError('a new session needs --project DIR (or continue one with --session ID)');
  const project = path.resolve(options.project);
  if (!fs.existsSync(project) || !fs.statSync(project).isDirectory()) {
    throw new CliError(`the project folder ${project} does not exist or is not a folder`);
  }
  const settings = readSettings(home);
  const providerText = options.provider ?? settings.defaults.provider;
  if (providerText === undefined) {
    throw new CliError(
      'choose a provider: --provider anthropic|openai|openai-compatible (or set defaults in settings.json)',
    );
  }
  const provider = ProviderKind.safeParse(providerText);
  if (!provider.success)
    throw new CliError(`unknown provider "${providerText}": use anthropic, openai or openai-compatible`);
  const model = options.model ?? settings.defaults.model;
  if (model === undefined)
    throw new CliError('choose a model: --model ID (or set defaults.model in settings.json)');
  const policy = Policy.safeParse(options.policy ?? settings.defaults.policy ?? 'ask');
  if (!policy.success)
    throw new CliError(`unknown policy "${options.policy}": use read-only, ask, auto-edit or full-auto`);
  const baseUrl =
    options.baseUrl ??
    settings.providers[provider.data]?.baseUrl ??
    (provider.data === settings.defaults.provider ? settings.defaults.baseUrl : undefined);
  if (provider.data === 'openai-compatible' && baseUrl === undefined) {
    throw new CliError(
      'an openai-compatible provider needs --base-url (e.g. http://127.0.0.1:11434/v1 for Ollama)',
    );
  }
  let contextWindow: number;
  try {
    contextWindow = resolveContextWindow(model, options.contextWindow ?? settings.contextWindows[model]);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  const networkAllow = options.allowHost ?? settings.defaults.networkAllow ?? [];
  return SessionLog.create(home, {
    ...(options.title ? { title: options.title } : {}),
    projectFolder: fs.realpathSync(project),
    provider: provider.data,
    model,
    ...(baseUrl ? { baseUrl } : {}),
    contextWindow,
    toolMode: policy.data === 'read-only' ? 'read-only' : 'write',
    policy: policy.data,
    ...(networkAllow.length > 0 ? { networkAllow } : {}),
  });
}
