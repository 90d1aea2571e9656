import type { Command } from 'commander';
import { ProviderKind } from '../../common/events.js';
import {
  catalogueView,
  homeStoredKeys,
  ProviderError,
  readSettings,
  refreshServedModels,
} from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';
import { formatTable } from '../format.js';
import { registerLocalModels } from './localModels.js';

const NAMES = { anthropic: 'Anthropic', openai: 'OpenAI' } as const;

/**
 * `keel models [--provider P] [--refresh] [--json]`: the models a new session or `keel model` can pin, as
 * the provider's own list says (its age shown; `--refresh` reads the endpoint now) with Keel's catalogue
 * hints beside it: window, lifecycle, whether the provider lists it.
 */
export function registerModels(program: Command, context: CliContext): void {
  const models = program.command('models');
  registerLocalModels(models, context);
  models
    .description(
      "list the models Keel knows, marked with whether the provider's own list has them, and its age",
    )
    .option('--provider <provider>', 'anthropic | openai (default: both)')
    .option('--refresh', "read the provider's models endpoint now (GET /v1/models)")
    .option('--json', 'print JSON')
    .action(async (options: { provider?: string; refresh?: boolean; json?: boolean }) => {
      const home = context.home();
      const chosen = options.provider === undefined ? undefined : ProviderKind.safeParse(options.provider);
      if (chosen && (!chosen.success || chosen.data === 'openai-compatible')) {
        throw new CliError(`--provider must be anthropic or openai (got "${options.provider ?? ''}")`);
      }
      const providers = chosen?.success
        ? [chosen.data as 'anthropic' | 'openai']
        : (['anthropic', 'openai'] as const);
      const settings = readSettings(home);
      const failures = new Map<string, string>();
      if (options.refresh) {
        for (const provider of providers) {
          try {
            await refreshServedModels(provider, settings.providers[provider]?.baseUrl, {
              home,
              clock: context.clock,
              keys: homeStoredKeys(home),
              env: context.io.env,
            });
          } catch (error) {
            if (!(error instanceof ProviderError)) throw error;
            failures.set(provider, error.message);
          }
        }
      }
      const view = catalogueView(home, settings, context.clock);
      const models = view.models.filter((model) => providers.includes(model.provider));
      if (options.json) {
        const served = view.served.filter((list) => providers.some((provider) => provider === list.provider));
        context.io.stdout(
          `${JSON.stringify({ today: view.today, served, failures: Object.fromEntries(failures), models }, null, 2)}\n`,
        );
        return;
      }
      for (const provider of providers) {
        const list = view.served.find((entry) => entry.provider === provider);
        const failure = failures.get(provider);
        context.io.stdout(
          `${
            list
              ? `${NAMES[provider]} lists ${list.count} models (checked ${list.age})`
              : `${NAMES[provider]}'s list was not read yet (keel models --refresh)`
          }${failure ? `; could not check now: ${failure}` : ''}\n`,
        );
      }
      const rows = models.map((model) => [
        `${model.provider}:${model.id}`,
        String(model.contextWindow),
        model.retiresOn ? `${model.status} (retires ${model.retiresOn})` : model.status,
        model.listed === undefined ? '?' : model.listed ? 'yes' : 'no',
        view.suggested[model.provider] === model.id ? 'suggested' : '',
      ]);
      context.io.stdout(`${formatTable(['MODEL', 'WINDOW', 'LIFECYCLE', 'LISTED', ''], rows)}\n`);
    });
}
