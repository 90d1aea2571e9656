import {
  addKeelRule,
  approveProjectSetup,
  defaultUserHome,
  projectRules,
  projectSetupTrust,
  realProjectFolder,
  removeKeelRule,
  revokeProjectSetup,
  RulesError,
  SetupTrustError,
} from '../../core/harness/index.js';
import { IpcFailure } from '../errors.js';
import type { setupChannels } from '../contract/setupChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** A refusal of the core (a bad rule, files changed since shown) as the channel's error. */
function refusing<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof SetupTrustError || error instanceof RulesError) {
      throw new IpcFailure('invalid_state', error.message);
    }
    throw error;
  }
}

/** The handlers of a project's setup trust and permission rules (the same core functions keel trust / rules call). */
export function setupHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof setupChannels> {
  const { home, env } = ctx;
  const userHome = () => defaultUserHome(env);
  const rules = (folder: string) => projectRules({ home, userHome: userHome(), project: folder });
  return {
    'setup.trust': (args) => ({ report: refusing(() => projectSetupTrust(home, args.folder)) }),
    'setup.approve': (args) => ({
      report: refusing(() => approveProjectSetup(home, args.folder, 'app settings', args.hashes)),
    }),
    'setup.revoke': (args) => ({
      report: refusing(() => revokeProjectSetup(home, args.folder, 'app settings')),
    }),
    'rules.list': (args) => rules(args.folder),
    'rules.add': (args) => {
      refusing(() =>
        addKeelRule(home, {
          project: args.allProjects ? '' : realProjectFolder(args.folder),
          action: args.action,
          rule: args.rule,
          via: 'app settings',
        }),
      );
      return rules(args.folder);
    },
    'rules.remove': (args) => {
      refusing(() =>
        removeKeelRule(home, {
          project: args.folder,
          userHome: userHome(),
          rule: args.rule,
          ...(args.action ? { action: args.action } : {}),
          via: 'app settings',
        }),
      );
      return rules(args.folder);
    },
  };
}
