import type { ChannelOutput } from '../../../../main/ipc/contract.js';

/** One Persistent Dir checkout of a session, as sessions.open lists it. */
export type SessionCheckout = ChannelOutput<'sessions.open'>['persistentDirs'][number];
/** One dir of persistent.diff's answer: what the header counts. */
export type UncommittedDir = ChannelOutput<'persistent.diff'>['dirs'][number];

/**
 * How a session's changes reach its folder: applied when each turn ends (`auto`), after review (`manual`),
 * written into the folder as tools run (`direct`: no checkout), or never (`read-only`: every dir is).
 */
export type CheckoutMode = 'auto' | 'manual' | 'direct' | 'read-only';

/** What the session header shows for its checkout mode: a short label, and the tooltip that explains it. */
export type CheckoutModeSummary = {
  mode: CheckoutMode;
  label: string;
  tooltip: string;
  /** Uncommitted files waiting for review in manual dirs; undefined unless the mode is manual and they are known. */
  uncommitted: number | undefined;
};

const LABELS: Record<CheckoutMode, string> = {
  auto: 'Checkout · applies when each turn ends',
  manual: 'Checkout · review, then apply',
  direct: 'Edits the folder directly',
  'read-only': 'Checkout · read-only',
};

const EXPLANATIONS: Record<CheckoutMode, string> = {
  auto:
    'The agent edits its own checkout of the folder, not the folder itself. When each turn ends, the ' +
    "turn's changes are merged into the folder; a change that conflicts with the folder is not written. " +
    'Changes lists what each turn applied.',
  manual:
    'The agent edits its own checkout of the folder, not the folder itself. Its changes reach the folder ' +
    'only when you apply them in Changes (or are dropped when you discard them); a new turn waits until you do.',
  direct:
    'No checkout: the agent writes into the folder itself as each tool runs. There is nothing to review or ' +
    'apply afterwards.',
  'read-only':
    'The agent works on its own checkout of the folder, read-only for this session: its changes never reach ' +
    'the folder and are discarded before each turn.',
};

function dirMode(dir: SessionCheckout): string {
  if (dir.readOnly) return 'read-only, never applied';
  return dir.commit === 'auto' ? 'applies when each turn ends' : 'review, then apply';
}

/**
 * The header's account of how changes reach the folder, from sessions.open's checkouts (and, for manual dirs,
 * the uncommitted files persistent.diff found, when already read). A dir waiting for review decides the mode
 * of a session with several; the tooltip then names each dir's own.
 */
export function describeCheckoutMode(
  dirs: readonly SessionCheckout[],
  uncommitted?: readonly UncommittedDir[],
): CheckoutModeSummary {
  const writable = dirs.filter((dir) => !dir.readOnly);
  const mode: CheckoutMode =
    dirs.length === 0
      ? 'direct'
      : writable.length === 0
        ? 'read-only'
        : writable.some((dir) => dir.commit === 'manual')
          ? 'manual'
          : 'auto';
  const perDir = dirs.length > 1 ? `\n\n${dirs.map((dir) => `${dir.dir}: ${dirMode(dir)}`).join('\n')}` : '';
  const count =
    mode === 'manual' && uncommitted
      ? uncommitted
          .filter((dir) => dir.commit === 'manual' && !dir.readOnly)
          .reduce((sum, dir) => sum + dir.files.length, 0)
      : undefined;
  return { mode, label: LABELS[mode], tooltip: `${EXPLANATIONS[mode]}${perDir}`, uncommitted: count };
}
