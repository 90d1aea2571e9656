import {
  chooseModel,
  homeStoredKeys,
  ModelChoiceError,
  type ModelChoice,
  type ModelRequest,
} from '../core/harness/index.js';
import type { ModelPin } from '../common/events.js';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';

/**
 * The core's model choice as `keel run` and `keel model` use it: keys from the home's key file, else the environment, the CLI's clock,
 * errors worded with the flag that fixes them, and a warning printed as one `keel: warning:` line.
 */
export async function chooseCliModel(
  context: CliContext,
  request: ModelRequest,
  previous?: ModelPin,
): Promise<ModelChoice> {
  let choice: ModelChoice;
  try {
    choice = await chooseModel(request, {
      home: context.home(),
      clock: context.clock,
      keys: homeStoredKeys(context.home()),
      env: context.io.env,
      ...(previous ? { previous } : {}),
    });
  } catch (error) {
    if (!(error instanceof ModelChoiceError)) throw error;
    if (error.code === 'unknown_window') {
      throw new CliError(
        `the context window of model "${request.model}" is unknown: pass --context-window N (or set it for the model in settings)`,
      );
    }
    if (error.code === 'needs_base_url') {
      throw new CliError(
        'an openai-compatible provider needs --base-url (e.g. http://127.0.0.1:11434/v1 for Ollama)',
      );
    }
    throw new CliError(error.message);
  }
  if (choice.warning) context.io.stderr(`keel: warning: ${choice.warning}\n`);
  if (choice.effortWarning) context.io.stderr(`keel: warning: ${choice.effortWarning}\n`);
  return choice;
}
