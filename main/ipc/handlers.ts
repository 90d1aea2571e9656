import { sweepDeadScratch } from '../core/harness/index.js';
import { channels, isChannelName } from './contract.js';
import { describeInvalidInput, toIpcError } from './errors.js';
import { appHandlers } from './handlers/appHandlers.js';
import { backgroundHandlers } from './handlers/backgroundHandlers.js';
import { importHandlers } from './handlers/importHandlers.js';
import { checkoutHandlers } from './handlers/checkoutHandlers.js';
import { localModelHandlers } from './handlers/localModelHandlers.js';
import { mcpHandlers } from './handlers/mcpHandlers.js';
import { composerHandlers } from './handlers/composerHandlers.js';
import { createHandlerContext } from './handlers/context.js';
import { planHandlers } from './handlers/planHandlers.js';
import { reviewHandlers } from './handlers/reviewHandlers.js';
import { sessionHandlers } from './handlers/sessionHandlers.js';
import { setupHandlers } from './handlers/setupHandlers.js';
import {
  DEFAULT_CLIENT,
  type Caller,
  type HandlerOptions,
  type Handlers,
  type HandlerTable,
} from './handlers/types.js';
import { workHandlers } from './handlers/workHandlers.js';
import { historyHandlers } from './handlers/historyHandlers.js';

export * from './handlers/types.js';
export { LOCAL_SERVERS } from './handlers/appHandlers.js';

/** Creates the handler table over one home. Nothing holds a session lease except a running turn or one write. */
export function createHandlers(options: HandlerOptions): Handlers {
  // The app's and keel serve's start: end what runs of killed Keels left (never resumed sessions' included).
  void sweepDeadScratch();
  const ctx = createHandlerContext(options);
  const { hub, turns, terminals, outputFlows, index, state } = ctx;
  const localModels = localModelHandlers(ctx);
  const table: HandlerTable = {
    ...sessionHandlers(ctx),
    ...reviewHandlers(ctx),
    ...workHandlers(ctx),
    ...historyHandlers(ctx),
    ...appHandlers(ctx),
    // Issue 35: Settings → Import history.
    ...importHandlers(ctx),
    ...setupHandlers(ctx),
    // Issue 37: the composer.
    ...composerHandlers(ctx),
    // Issue 36: Settings → Checkout storage.
    ...checkoutHandlers(ctx),
    // Issue 30: plan mode.
    ...planHandlers(ctx),
    // Issue 34: local models.
    ...localModels.table,
    // Issue 32: background commands in the terminal dock.
    ...backgroundHandlers(ctx),
    // Issue 33: Settings → MCP servers.
    ...mcpHandlers(ctx),
  };

  return {
    hub,
    async invoke(channel, input, client = DEFAULT_CLIENT) {
      if (!isChannelName(channel)) {
        return { ok: false, error: { code: 'not_found', message: `unknown channel ${String(channel)}` } };
      }
      if (state.closed)
        return { ok: false, error: { code: 'invalid_state', message: 'Keel is shutting down' } };
      const spec = channels[channel];
      const parsed = spec.input.safeParse(input ?? {});
      if (!parsed.success) {
        return { ok: false, error: { code: 'invalid_input', message: describeInvalidInput(parsed.error) } };
      }
      try {
        const handler = table[channel] as (args: unknown, caller: Caller) => unknown;
        const value = await handler(parsed.data, { client });
        const checked = spec.output.safeParse(value);
        if (!checked.success) {
          process.emitWarning(
            `keel: ${channel} returned a value outside the contract: ${checked.error.message}`,
          );
          return {
            ok: false,
            error: {
              code: 'internal',
              message: `${channel} produced an invalid result (${describeInvalidInput(checked.error)})`,
            },
          };
        }
        return { ok: true, value: checked.data };
      } catch (error) {
        return { ok: false, error: toIpcError(error) };
      }
    },
    async disconnect(client) {
      outputFlows.disconnect(client);
      await terminals.disconnect(client);
    },
    runningSessions: () => turns.runningSessions(),
    async close(reason) {
      if (state.closed) return;
      state.closed = true;
      localModels.close();
      await Promise.all([turns.stopAll(reason), terminals.closeAll()]);
      outputFlows.close();
      index.close();
    },
  };
}
