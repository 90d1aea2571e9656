import type { TurnScope } from './scope.js';

/**
 * Appends `custom_listed` when the host's skills and custom agents (names, descriptions, origins, problems)
 * differ from the newest such event (none yet counts as an empty list), so the projection's head moves only
 * when they change. Traced as `custom`. A host without a list records nothing.
 */
export function recordCustomChange(turn: TurnScope): void {
  const { host } = turn;
  if (!host.custom) return;
  const started = Date.now();
  const listing = host.custom;
  const seq = host.log.lastSeqOfKind('custom_listed');
  const newest = seq === undefined ? undefined : host.log.read({ fromSeq: seq, limit: 1 })[0];
  const before =
    newest?.kind === 'custom_listed'
      ? {
          skills: newest.skills,
          agents: newest.agents,
          ...(newest.problems ? { problems: newest.problems } : {}),
        }
      : { skills: [], agents: [] };
  const changed = JSON.stringify(before) !== JSON.stringify(listing);
  if (changed) turn.append({ kind: 'custom_listed', ...listing });
  // A session with nothing set up leaves no trace record (most sessions; their traces stay as they were).
  if (!changed && listing.skills.length === 0 && listing.agents.length === 0) return;
  turn.record('custom', started, { skills: listing.skills.length, agents: listing.agents.length, changed });
}
