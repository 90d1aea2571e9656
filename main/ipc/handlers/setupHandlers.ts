import {
  addKeelRule,
  approveProjectSetup,
  defaultUserHome,
  projectRules,
  projectSetupTrust,
  realProjectFolder,
  removeKeelRule,
  revokeProjectSetup,
} from '../../core/harness/index.js';
import type { setupChannels } from '../contract/setupChannels.js';
import type { HandlerContext } from './context.js';
import type { HandlerTable } from './types.js';

/** The handlers of a project's setup trust and permission rules (the same core functions keel trust / rules call). */
export function setupHandlers(ctx: HandlerContext): Pick<HandlerTable, keyof typeof setupChannels> {
  const { home, env } = ctx;
  const userHome = () => defaultUserHome(env);
  const rules = (folder: string) => projectRules({ home, userHome: userHome(), project: folder });
  return {
    'setup.trust': (args) => ({ report: projectSetupTrust(home, args.folder) }),
    'setup.approve': (args) => ({
      report: approveProjectSetup(home, args.folder, 'app settings', args.hashes),
    }),
    'setup.revoke': (args) => ({
      report: revokeProjectSetup(home, args.folder, 'app settings'),
    }),
    'rules.list': (args) => rules(args.folder),
    'rules.add': (args) => {
      addKeelRule(home, {
        project: args.allProjects ? '' : realProjectFolder(args.folder),
        action: args.action,
        rule: args.rule,
        via: 'app settings',
      });
      return rules(args.folder);
    },
    'rules.remove': (args) => {
      removeKeelRule(home, {
        project: args.folder,
        userHome: userHome(),
        rule: args.rule,
        ...(args.action ? { action: args.action } : {}),
        via: 'app settings',
      });
      return rules(args.folder);
    },
  };
}
