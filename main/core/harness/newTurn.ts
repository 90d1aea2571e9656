import type { ModelPin } from '../../common/events.js';
import { factorFor, loadEstimator, tokenUpperBound } from '../compaction/tokens.js';
import { SessionLog } from '../log/sessionLog.js';
import { homeOf } from '../paths.js';
import type { UncommittedDir } from '../persistent/types.js';
import { loadSessionState } from '../turn/loadState.js';
import { HarnessError } from './errors.js';
import type { LocalHarnessSession } from './harness.js';

/**
 * A new turn refused because its reset would discard what manual Persistent Dirs hold uncommitted. `what`
 * names the dirs and their file counts; hosts word the way out (the app: apply or discard; the CLI: the
 * commands that do it).
 */
export class UncommittedChangesError extends HarnessError {
  constructor(
    readonly sessionId: string,
    readonly dirs: readonly UncommittedDir[],
    readonly what: string,
  ) {
    super(
      'invalid_state',
      `this session has changes in ${what} that a new turn would discard: apply or discard them first`,
    );
    this.name = 'UncommittedChangesError';
  }
}

/**
 * The guard every host runs before a new prompt of a session with Persistent Dirs: the turn resets its
 * checkouts, so uncommitted changes of writable manual dirs are refused (UncommittedChangesError) before
 * anything is lost, or dropped first when the caller chose `discardChanges`. Continuing a turn passes no guard.
 */
export async function guardNewTurn(
  session: LocalHarnessSession,
  options: { discardChanges?: boolean } = {},
): Promise<void> {
  if (session.persistentDirs().length === 0) return;
  if (options.discardChanges === true) {
    await session.discard();
    return;
  }
  const pending = (await session.uncommitted()).filter((dir) => dir.commit === 'manual' && !dir.readOnly);
  if (pending.length === 0) return;
  const what = pending
    .map((dir) => `${dir.dir} (${dir.files.length} file${dir.files.length === 1 ? '' : 's'})`)
    .join(', ');
  throw new UncommittedChangesError(session.id, pending, what);
}

/**
 * The share of the model's window one prompt may take: the rest holds the system prompt, the tools' definitions
 * and the reply. A prompt over it would make the next request fail at the provider (HTTP 400) and leave the
 * session stuck, since compaction never shortens the newest message.
 */
export const PROMPT_WINDOW_SHARE = 0.75;

/** A prompt refused before it is recorded because it cannot fit the model's context window. */
export class PromptTooLargeError extends HarnessError {
  constructor(
    readonly tokens: number,
    readonly limit: number,
    readonly pin: Pick<ModelPin, 'model' | 'contextWindow'>,
  ) {
    super(
      'invalid_input',
      `This message is too long for ${pin.model}: it is about ${grouped(tokens)} tokens, and one message can use ` +
        `at most ${grouped(limit)} of the model's ${grouped(pin.contextWindow)}-token context window (the rest ` +
        `holds Keel's instructions, the tools and the reply). Nothing was sent. Shorten it, or put the text in a ` +
        `file in the project and ask the model to read the parts it needs.`,
    );
    this.name = 'PromptTooLargeError';
  }
}

const grouped = (value: number) => value.toLocaleString('en-US');

/**
 * The size check every host runs on a new prompt before anything is recorded: refused (PromptTooLargeError,
 * a sentence for people) when its estimated tokens pass PROMPT_WINDOW_SHARE of the pinned model's window.
 * A prompt whose byte count (an upper bound on any BPE count) fits is passed without loading a vocabulary.
 */
export async function checkPromptSize(
  prompt: string,
  pin: Pick<ModelPin, 'provider' | 'model' | 'contextWindow'>,
): Promise<void> {
  const limit = Math.floor(pin.contextWindow * PROMPT_WINDOW_SHARE);
  if (tokenUpperBound(prompt, factorFor(pin)) <= limit) return;
  const tokens = (await loadEstimator(pin)).count(prompt);
  if (tokens > limit) throw new PromptTooLargeError(tokens, limit, pin);
}

/** checkPromptSize for a session's pinned model (read from its log). */
export async function checkSessionPrompt(session: LocalHarnessSession, prompt: string): Promise<void> {
  const log = SessionLog.open(homeOf(session.dataDir), session.id, { write: false });
  let pin: ModelPin;
  try {
    pin = loadSessionState(log).pin;
  } finally {
    log.close();
  }
  await checkPromptSize(prompt, pin);
}
