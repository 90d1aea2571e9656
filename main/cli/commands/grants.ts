import { type GrantRecord, listGrants, revokeGrant } from '../../core/harness/index.js';
import type { Command } from 'commander';
import { parsePositiveInteger } from '../arguments.js';
import type { CliContext } from '../context.js';
import { formatTable } from '../format.js';
import { withSessionLog, withWritableSession } from '../session.js';

/**
 * `keel grants SESSION [--all] [--json]`: the grants in effect (what each allows, when it was granted);
 * `keel revoke SESSION GRANT_SEQ [--reason TEXT]`: ends one with an approval_revoked event, so the next
 * matching call asks again.
 */
export function registerGrants(program: Command, context: CliContext): void {
  program
    .command('grants')
    .description('list the approval grants in effect in a session: what each allows and when it was granted')
    .argument('<session>', 'session id')
    .option('--all', 'also list revoked grants')
    .option('--json', 'print JSON')
    .action((session: string, options: { all?: boolean; json?: boolean }) => {
      const all = withSessionLog(context.home(), session, (log) => listGrants(log.read()));
      const grants = options.all ? all : all.filter((grant) => !grant.revoked);
      if (options.json) {
        context.io.stdout(`${JSON.stringify({ sessionId: session, grants }, null, 2)}\n`);
        return;
      }
      if (grants.length === 0) {
        context.io.stdout(
          all.length === 0 ? 'no grants in this session\n' : 'no grants in effect (keel grants --all)\n',
        );
        return;
      }
      const rows = grants.map((grant) => [
        String(grant.seq),
        grant.tool,
        grant.scope,
        grant.grantedAt,
        state(grant),
        grant.allows,
      ]);
      context.io.stdout(`${formatTable(['GRANT', 'TOOL', 'SCOPE', 'GRANTED', 'STATE', 'ALLOWS'], rows)}\n`);
    });
  program
    .command('revoke')
    .description('revoke a grant (an event in the log): the calls it allowed ask for approval again')
    .argument('<session>', 'session id')
    .argument('<grant>', 'the grant to revoke: its seq, as keel grants lists it', parsePositiveInteger)
    .option('--reason <text>', 'why, kept in the log')
    .action(async (session: string, grantSeq: number, options: { reason?: string }) => {
      await withWritableSession(context.home(), session, (log) => {
        const result = revokeGrant(context.home(), log, grantSeq, options.reason, 'keel revoke');
        context.io.stderr(
          `keel: revoked grant ${grantSeq} (${result.grant.tool}, ${result.grant.scope}); matching calls ask again\n`,
        );
      });
    });
}

function state(grant: GrantRecord): string {
  if (!grant.revoked) return 'in effect';
  const reason = grant.revoked.reason ? `: ${grant.revoked.reason}` : '';
  return `revoked ${grant.revoked.at}${reason}`;
}
