import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { SetupTrustReport } from '../../common/setup.js';
import {
  addKeelRule,
  approveProjectSetup,
  defaultUserHome,
  projectRules,
  projectSetupTrust,
  removeKeelRule,
  revokeProjectSetup,
  type RulesReport,
} from '../../core/harness/index.js';
import type { CliContext } from '../context.js';
import { CliError } from '../errors.js';

const STATE_WORD = {
  approved: 'approved',
  new: 'NEW     ',
  changed: 'CHANGED ',
  removed: 'removed ',
} as const;

/** A trust report as lines: each file with its state, then the diff of each one not approved. */
function formatTrust(report: SetupTrustReport, withDiffs: boolean): string {
  const lines = [`${report.project}: ${report.status === 'none' ? 'brings no setup files' : report.status}`];
  if (report.approvedAt) lines.push(`last approved ${report.approvedAt} (${report.approvedVia ?? ''})`);
  for (const entry of report.entries) {
    const word = entry.state === 'approved' ? 'approved' : STATE_WORD[entry.state];
    lines.push(`  ${word.padEnd(8)}  ${entry.path}  (${entry.layout} ${entry.kind}, ${entry.size} bytes)`);
  }
  for (const problem of report.problems)
    lines.push(`  ignored   ${problem.path}:${problem.line}: ${problem.message}`);
  if (withDiffs) {
    for (const entry of report.entries) {
      if (entry.state === 'approved') continue;
      lines.push('', entry.diff ?? `${entry.path}: ${entry.state} (not text, or too big to show)`);
    }
  }
  return `${lines.join('\n')}\n`;
}

function formatRules(report: RulesReport): string {
  const lines = [`${report.project}:`];
  if (report.rules.length === 0) lines.push('  no permission rules in effect');
  for (const rule of report.rules) {
    const inert = report.inert.includes(rule.rule) ? '  (names no Keel tool: matches nothing)' : '';
    lines.push(`  ${rule.action.padEnd(5)}  ${rule.rule}  from ${rule.source}${inert}`);
  }
  for (const rule of report.untrusted) {
    lines.push(`  ${rule.action.padEnd(5)}  ${rule.rule}  from ${rule.source}  (NOT in effect: keel trust)`);
  }
  for (const problem of report.problems)
    lines.push(`  ignored  ${problem.path}:${problem.line}: ${problem.message}`);
  return `${lines.join('\n')}\n`;
}

/** The action an `add` / `rm` names with --allow, --ask or --deny (exactly one for add). */
function actionOf(options: { allow?: boolean; ask?: boolean; deny?: boolean }, required: boolean) {
  const chosen = (['allow', 'ask', 'deny'] as const).filter((action) => options[action]);
  if (chosen.length > 1) throw new CliError('name one of --allow, --ask, --deny');
  if (chosen.length === 0 && required)
    throw new CliError('name what the rule does: --allow, --ask or --deny');
  return chosen[0];
}

/**
 * `keel trust [--project DIR] [--approve | --revoke]`: what a project folder brings (`.claude/`, `.agents/`,
 * `.keel/`, `.codex/hooks.json`) and the diff since the last approval; `keel rules [list|add|rm]`: the
 * permission rules in effect and where each came from, and Keel's own rules.
 */
export function registerSetup(program: Command, context: CliContext): void {
  const folderOf = (project: string | undefined) => path.resolve(project ?? process.cwd());
  const userHome = () => defaultUserHome(context.io.env);

  program
    .command('trust')
    .description(
      "show what a project's setup files bring and what changed since approved; approve or revoke them",
    )
    .option('--project <dir>', 'the project (default: the current folder)')
    .option('--approve', 'approve the files as shown: they take effect from the next turn')
    .option('--revoke', 'withdraw the approval: none of the files has an effect')
    .option('--json', 'print JSON')
    .action((options: { project?: string; approve?: boolean; revoke?: boolean; json?: boolean }) => {
      if (options.approve && options.revoke) throw new CliError('--approve and --revoke exclude each other');
      const home = context.home();
      const folder = folderOf(options.project);
      const shown = projectSetupTrust(home, folder);
      if (options.revoke) {
        const after = revokeProjectSetup(home, folder, 'keel trust --revoke');
        context.io.stdout(options.json ? `${JSON.stringify(after)}\n` : `revoked: ${after.project}\n`);
        return;
      }
      if (!options.approve) {
        context.io.stdout(options.json ? `${JSON.stringify(shown)}\n` : formatTrust(shown, true));
        if (shown.status === 'untrusted' && !options.json) {
          context.io.stdout(
            `\nThese files have no effect until approved: keel trust --project ${shown.project} --approve\n`,
          );
        }
        return;
      }
      // Approve exactly what was read for the report: a file changed meanwhile refuses the approval.
      const expect = Object.fromEntries(
        shown.entries.filter((entry) => entry.state !== 'removed').map((entry) => [entry.path, entry.hash]),
      );
      if (!options.json) context.io.stdout(formatTrust(shown, true));
      const after = approveProjectSetup(home, folder, 'keel trust --approve', expect);
      context.io.stdout(
        options.json
          ? `${JSON.stringify(after)}\n`
          : `\napproved ${after.entries.length} files of ${after.project}\n`,
      );
    });

  const rules = program
    .command('rules')
    .description('permission rules in effect (allow / ask / deny) and where each came from');
  rules
    .command('list', { isDefault: true })
    .description('list the rules in effect for a project, with their source')
    .option('--project <dir>', 'the project (default: the current folder)')
    .option('--json', 'print JSON')
    .action((options: { project?: string; json?: boolean }) => {
      const report = projectRules({
        home: context.home(),
        userHome: userHome(),
        project: folderOf(options.project),
      });
      context.io.stdout(options.json ? `${JSON.stringify(report)}\n` : formatRules(report));
    });
  rules
    .command('add <rule>')
    .description('add a Keel rule, e.g. keel rules add "Bash(npm test:*)" --allow')
    .option('--allow', 'run matching calls without asking (a command as a prefix grant would)')
    .option('--ask', 'always ask for matching calls')
    .option('--deny', 'refuse matching calls, in every policy')
    .option('--project <dir>', 'the project it holds in (default: the current folder)')
    .option('--all-projects', 'hold in every project')
    .action(
      (
        rule: string,
        options: { allow?: boolean; ask?: boolean; deny?: boolean; project?: string; allProjects?: boolean },
      ) => {
        const action = actionOf(options, true) as 'allow' | 'ask' | 'deny';
        if (options.allProjects && options.project)
          throw new CliError('--project and --all-projects exclude each other');
        const project = options.allProjects ? '' : realFolder(folderOf(options.project));
        const kept = addKeelRule(context.home(), { project, action, rule, via: 'keel rules add' });
        context.io.stdout(
          `added: ${kept.action} ${kept.rule} (${kept.project || 'every project'}); from the next turn\n`,
        );
      },
    );
  rules
    .command('rm <rule>')
    .description('remove a Keel rule (a rule from a settings file is removed by editing that file)')
    .option('--allow', 'only the allow rule')
    .option('--ask', 'only the ask rule')
    .option('--deny', 'only the deny rule')
    .option('--project <dir>', 'the project (default: the current folder)')
    .action((rule: string, options: { allow?: boolean; ask?: boolean; deny?: boolean; project?: string }) => {
      const action = actionOf(options, false);
      const removed = removeKeelRule(context.home(), {
        project: folderOf(options.project),
        userHome: userHome(),
        rule,
        ...(action ? { action } : {}),
        via: 'keel rules rm',
      });
      for (const kept of removed)
        context.io.stdout(`removed: ${kept.action} ${kept.rule} (${kept.project || 'every project'})\n`);
    });
}

function realFolder(folder: string): string {
  try {
    return fs.realpathSync(folder);
  } catch {
    throw new CliError(`${folder} is not a folder that exists`);
  }
}
