import { z } from 'zod';
import { BackgroundHandle } from '../../common/backgroundEvents.js';
import { sessionId } from './schemas.js';

/** Issue #32: a session's background commands (run_command with background: true) in the terminal dock. */
export const BackgroundCommand = z.object({
  handle: z.string(),
  command: z.string(),
  /** The box's launcher process while this Keel runs it. */
  pid: z.number().int().nullable(),
  state: z.enum(['running', 'ended']),
  exitCode: z.number().int().nullable(),
  signal: z.string().nullable(),
  /** How it ended, in words (absent while it runs). */
  ended: z.string().optional(),
  /** Its latest output, redacted (empty for a command this Keel never ran). */
  tail: z.string(),
});
export type BackgroundCommand = z.infer<typeof BackgroundCommand>;

export const backgroundChannels = {
  'background.list': {
    doc: "The session's background commands: those this Keel runs or ran (state, pid, output tail), then those its log knows of (how they ended, or that they were lost with a Keel that ended).",
    input: z.object({ sessionId }),
    output: z.object({ commands: z.array(BackgroundCommand) }),
  },
  'background.stop': {
    doc: 'Stops one background command and its whole process tree (its end is recorded in the log); `invalid_state` if it is not running here.',
    input: z.object({ sessionId, handle: BackgroundHandle }),
    output: z.object({ stopped: z.literal(true) }),
  },
};
