import {
  createLocalPulls,
  listLocalModels,
  localMachineSuggestion,
  localModelPin,
  readSettings,
} from '../../core/harness/index.js';
import type { localModelChannels } from '../contract/localModelChannels.js';
import { IpcFailure } from '../errors.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** A new session's pin on a local model (localModelPin); a model not downloaded is the caller's mistake, said so. */
export async function localPin(home: string, model: string, contextWindow: number | undefined) {
  try {
    return await localModelPin(home, model, contextWindow, readSettings(home).providers.local);
  } catch (error) {
    throw new IpcFailure('invalid_input', (error as Error).message);
  }
}

/** Issue 34's handlers: thin adapters over harness/localModels.ts, as `keel models local` is. */
export function localModelHandlers(ctx: HandlerContext): {
  table: Pick<HandlerTable, keyof typeof localModelChannels>;
  close: () => void;
} {
  const { home, hub, options } = ctx;
  const pulls = createLocalPulls({
    home,
    onUpdate: (update) => hub.publish('models.localProgress', update),
    ...(options.localModelBase ? { baseOverride: options.localModelBase } : {}),
  });
  return {
    table: {
      'models.localMachine': async () => {
        const { machine, suggested, why } = await localMachineSuggestion(home);
        return {
          machine: {
            gpu: machine.gpu,
            gpuNames: machine.gpuNames,
            vramBytes: machine.vramBytes,
            unifiedBytes: machine.unifiedBytes,
            ramBytes: machine.ramBytes,
            ...(machine.problem ? { problem: machine.problem } : {}),
          },
          suggested,
          why,
        };
      },
      'models.localList': () => listLocalModels(home),
      'models.localPull': (args) => {
        try {
          return { id: args.id, ...pulls.start(args.id) };
        } catch (error) {
          throw new IpcFailure('not_found', (error as Error).message);
        }
      },
      'models.localCancel': (args) => ({ cancelled: pulls.cancel(args.id) }),
    },
    close: () => pulls.close(),
  };
}
