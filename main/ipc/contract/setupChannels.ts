import { z } from 'zod';
import { PermissionRuleSource, SetupProblem, SetupTrustReport } from '../../common/setup.js';
import { folder, type ChannelSpec } from './schemas.js';

/** Keel's own permission rule as kept (rules.add, an approval's "always"), to show and remove. */
const KeptRuleView = z.object({
  project: z.string(),
  action: z.enum(['allow', 'ask', 'deny']),
  rule: z.string(),
  via: z.string(),
  at: z.string(),
  sessionId: z.string().optional(),
});

/** The rules in effect for a project, those waiting for trust, Keel's own, and the files ignored. */
const RulesView = z.object({
  project: z.string(),
  rules: z.array(PermissionRuleSource),
  untrusted: z.array(PermissionRuleSource),
  kept: z.array(KeptRuleView),
  problems: z.array(SetupProblem),
  inert: z.array(z.string()),
});

const action = z.enum(['allow', 'ask', 'deny']);

/** Issue 30: the setup a user brings (a project's trust, permission rules), as `keel trust` and `keel rules`. */
export const setupChannels = {
  'setup.trust': {
    doc: "What a project folder's setup files bring (.claude/, .agents/, .keel/, .codex/hooks.json), each approved, new, changed or removed, with the diff since the last approval.",
    input: z.object({ folder }),
    output: z.object({ report: SetupTrustReport }),
  },
  'setup.approve': {
    doc: 'Approves the files exactly as shown (path → sha256, from setup.trust): they take effect from the next turn; a file changed meanwhile refuses the approval.',
    input: z.object({ folder, hashes: z.record(z.string(), z.string()) }),
    output: z.object({ report: SetupTrustReport }),
  },
  'setup.revoke': {
    doc: "Withdraws the approval of a project's setup files: none has an effect from the next turn.",
    input: z.object({ folder }),
    output: z.object({ report: SetupTrustReport }),
  },
  'rules.list': {
    doc: 'The permission rules in effect for a project (user files, approved project files, Keel rules), each with where it came from.',
    input: z.object({ folder }),
    output: RulesView,
  },
  'rules.add': {
    doc: 'Adds a Keel permission rule (Bash(npm test:*), Edit(src/**), mcp__server) for the project, or every project with allProjects.',
    input: z.object({
      folder,
      action,
      rule: z.string().min(1).max(4096),
      allProjects: z.boolean().default(false),
    }),
    output: RulesView,
  },
  'rules.remove': {
    doc: 'Removes a Keel permission rule; a rule from a settings file is refused with the file to edit.',
    input: z.object({ folder, rule: z.string().min(1).max(4096), action: action.optional() }),
    output: RulesView,
  },
} satisfies Record<string, ChannelSpec>;
