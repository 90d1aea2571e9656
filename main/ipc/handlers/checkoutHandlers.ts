import {
  checkoutKindReport,
  checkoutStorage,
  collectCheckouts,
  setCheckoutKind,
} from '../../core/harness/index.js';
import type { checkoutChannels } from '../contract/checkoutChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** Issue 36's handlers: thin adapters over harness/checkoutStorage.ts, as `keel gc` is. */
export function checkoutHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof checkoutChannels> {
  const { home } = ctx;
  return {
    'checkouts.storage': () => checkoutStorage(home),
    'checkouts.collect': (args) =>
      collectCheckouts(home, { measure: true, ...(args.dryRun ? { dryRun: true } : {}) }),
    'checkouts.kind': () => checkoutKindReport(home),
    'checkouts.setKind': (args) => setCheckoutKind(home, args.kind),
  };
}
