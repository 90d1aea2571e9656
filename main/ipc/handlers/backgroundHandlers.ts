import { backgroundCommandsOf, HarnessError } from '../../core/harness/index.js';
import type { backgroundChannels } from '../contract/backgroundChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** Issue #32: the terminal dock's background commands; the rules are the harness's (core/harness/backgroundLog.ts). */
export function backgroundHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof backgroundChannels> {
  const { home, index, turns } = ctx;
  const known = (sessionId: string) => {
    if (!index.get(sessionId)) throw new HarnessError('not_found', `no session ${sessionId}`);
  };
  return {
    'background.list': (args) => {
      known(args.sessionId);
      return { commands: backgroundCommandsOf(home, args.sessionId) };
    },
    'background.stop': async (args) => {
      known(args.sessionId);
      if (!(await turns.stopBackground(args.sessionId, args.handle))) {
        throw new HarnessError(
          'invalid_state',
          `background command ${args.handle} is not running here (it ended, or another Keel started it)`,
        );
      }
      return { stopped: true as const };
    },
  };
}
