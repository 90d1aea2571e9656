import { sameInstructionFiles } from '../prompts/instructions.js';
import type { TurnScope } from './scope.js';

/**
 * Reads the project's instruction files through the host (when it has a reader) and appends
 * `instructions_loaded` when they differ from the newest such event (none yet counts as no files), so a
 * change between turns is recorded once and the projection's prefix moves only then. Traced as
 * `instructions`; a reader that fails is a notice, not a failed turn (nothing is recorded).
 */
export async function recordInstructionsChange(turn: TurnScope): Promise<void> {
  const { host } = turn;
  if (!host.instructions) return;
  const started = Date.now();
  let files;
  try {
    files = await host.instructions();
  } catch (error) {
    // Not a reason to refuse the turn: the model works on without them, and the next turn tries again.
    const reason = error instanceof Error ? error.message : String(error);
    host.hooks?.onNotice?.(`the project instructions could not be read: ${reason}`);
    return;
  }
  const seq = host.log.lastSeqOfKind('instructions_loaded');
  const newest = seq === undefined ? undefined : host.log.read({ fromSeq: seq, limit: 1 })[0];
  const before = newest?.kind === 'instructions_loaded' ? newest.files : [];
  const changed = !sameInstructionFiles(before, files);
  if (changed) turn.append({ kind: 'instructions_loaded', files });
  turn.record('instructions', started, { files: files.length, changed });
}
