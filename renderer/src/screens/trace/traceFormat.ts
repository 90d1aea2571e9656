import type { StageKind, TimelineStage } from '../../../../main/ipc/contract.js';

/** "0 ms", "350 ms", "1.2 s", "14 s", "2 min 05 s", "1 h 02 min": durations at a glance. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 60) return `${Math.round(seconds)} s`;
  const totalSeconds = Math.round(seconds);
  const minutes = Math.floor(totalSeconds / 60);
  if (minutes < 60) return `${minutes} min ${String(totalSeconds % 60).padStart(2, '0')} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** "$0", "$0.0042", "$0.31", "$12.40": USD with enough digits to tell small requests apart. */
export function formatCost(usd: number): string {
  if (!Number.isFinite(usd) || usd <= 0) return '$0';
  if (usd < 0.01) return `$${usd.toPrecision(2)}`;
  if (usd < 1) return `$${usd.toFixed(3)}`;
  return `$${usd.toFixed(2)}`;
}

/**
 * The cost; when some request's model had no price, the priced part as a lower bound ("≥ $0.31"), and "—"
 * (unknown) when none had one: an unpriced model never reads as $0.
 */
export function formatCostKnown(usd: number, known: boolean): string {
  if (known) return formatCost(usd);
  return usd > 0 ? `≥ ${formatCost(usd)}` : '—';
}

/** Why a cost is partial or unknown, for a tooltip; undefined when it is complete. */
export function costNote(known: boolean): string | undefined {
  return known
    ? undefined
    : "Keel has no documented price for this model: its requests' cost is unknown and not counted.";
}

/** "42%", or "—" when there is nothing to rate yet. */
export function formatPercent(share: number | null): string {
  if (share === null || !Number.isFinite(share)) return '—';
  return `${Math.round(share * 100)}%`;
}

const STAGE_LABELS: Record<StageKind, string> = {
  projection: 'Projection',
  request: 'Request',
  time_to_first_token: 'Time to first token',
  stream: 'Stream',
  retry: 'Retry',
  tool: 'Tool',
  approval_wait: 'Approval wait',
  compaction: 'Compaction',
  persistent: 'Checkout',
  other: 'Other',
};

/**
 * Trace stages the core records under their own names (main/core/harness: checkouts.ts, stream.ts; the turn
 * engine's usage marker): what a person reads instead of the name.
 */
const NAMED_STAGE_LABELS: Readonly<Record<string, string>> = {
  persistent_reset: 'Reset checkouts',
  persistent_commit: 'Apply changes to the folder',
  harness_turn: 'Turn',
  usage: 'Usage',
};

/** "some_new_stage" → "Some new stage": a stage this module has no words for still reads as words. */
function humanizeStageName(name: string): string {
  const words = name.replace(/[_:.-]+/g, ' ').trim();
  return words ? `${words.charAt(0).toUpperCase()}${words.slice(1)}` : name;
}

/** What a timeline bar is called: the tool's name for tools, the decision for approval waits, words for the rest. */
export function stageLabel(stage: TimelineStage): string {
  switch (stage.kind) {
    case 'tool':
      return stage.tool ?? stage.name.replace(/^tool:/, '');
    case 'approval_wait':
      return `Approval wait${stage.tool ? ` · ${stage.tool}` : ''}${
        stage.pending ? ' (pending)' : stage.decision ? ` (${stage.decision})` : ''
      }`;
    case 'other':
    case 'persistent':
      return NAMED_STAGE_LABELS[stage.name] ?? humanizeStageName(stage.name);
    default:
      return STAGE_LABELS[stage.kind];
  }
}

/** The stage kind in words, for legends. */
export function stageKindLabel(kind: StageKind): string {
  return STAGE_LABELS[kind];
}

/** A short line of what a stage's record carried (retry reason, compaction status, what a checkout step did…), or nothing. */
export function stageDetail(stage: TimelineStage): string | undefined {
  const detail = stage.detail;
  if (detail === undefined || detail === null) return undefined;
  const checkout = checkoutDetail(stage.name, detail);
  if (checkout !== undefined) return checkout;
  if (typeof detail === 'string') return detail;
  if (typeof detail === 'number' || typeof detail === 'boolean') return String(detail);
  if (typeof detail !== 'object') return undefined;
  const parts: string[] = [];
  for (const [key, value] of Object.entries(detail as Record<string, unknown>)) {
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    parts.push(`${key}: ${String(value)}`);
    if (parts.length >= 4) break;
  }
  return parts.length > 0 ? parts.join(' · ') : undefined;
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** One dir's commit report (main/core/persistent/turnCheckouts.ts `summarize`) in words: "project: 3 files applied". */
function describeCommitReport(report: unknown): string | undefined {
  if (typeof report !== 'object' || report === null) return undefined;
  const { dir, status, files, conflicts } = report as Record<string, unknown>;
  if (typeof dir !== 'string') return undefined;
  if (status === 'committed')
    return `${dir}: ${typeof files === 'number' ? plural(files, 'file') : 'changes'} applied`;
  if (status === 'conflict') {
    const paths = Array.isArray(conflicts) ? conflicts.filter((path) => typeof path === 'string') : [];
    return `${dir}: conflict${paths.length > 0 ? ` in ${paths.slice(0, 3).join(', ')}` : ''}, nothing applied`;
  }
  if (status === 'unchanged') return `${dir}: no changes`;
  return undefined;
}

/**
 * The checkout steps' records in words (their generic key: value line would show only counters): which dirs
 * were reset, what each commit applied or refused, whether it was a reviewed (manual) apply.
 */
function checkoutDetail(name: string, detail: unknown): string | undefined {
  if (typeof detail !== 'object' || detail === null) return undefined;
  const record = detail as Record<string, unknown>;
  if (name === 'persistent_reset') {
    const dirs = Array.isArray(record['reset'])
      ? record['reset'].filter((dir) => typeof dir === 'string')
      : [];
    const leftover = typeof record['leftoverCommits'] === 'number' ? record['leftoverCommits'] : 0;
    const parts = [dirs.length > 0 ? `reset ${dirs.join(', ')}` : 'nothing to reset'];
    if (leftover > 0) parts.push(`applied what the last turn left in ${plural(leftover, 'dir')} first`);
    return parts.join(' · ');
  }
  if (name === 'persistent_commit') {
    const reports = Array.isArray(record['reports']) ? record['reports'] : [];
    const parts = reports.flatMap((report) => describeCommitReport(report) ?? []);
    if (parts.length === 0) parts.push('nothing to apply');
    if (record['manual'] === true) parts.push('after review');
    return parts.join(' · ');
  }
  return undefined;
}
