import type { JSX } from 'react';
import type { NotificationSettings } from '../../../main/ipc/contract.js';

const KINDS: readonly { key: keyof NotificationSettings; label: string }[] = [
  { key: 'approval', label: 'A turn waits for my approval' },
  { key: 'finished', label: 'A turn finished' },
  { key: 'failed', label: 'A turn failed' },
];

export const ALL_ON: NotificationSettings = { approval: true, finished: true, failed: true };

/** Settings' "Notifications" checkboxes (issue #32): which turn endings notify while the window is unfocused. */
export function NotificationChoices({
  value,
  onChange,
}: {
  value: NotificationSettings | undefined;
  onChange: (next: NotificationSettings) => void;
}): JSX.Element {
  const current = value ?? ALL_ON;
  return (
    <fieldset className="field">
      <legend>Notify me when Keel is in the background and…</legend>
      {KINDS.map(({ key, label }) => (
        <label key={key} className="checkbox">
          <input
            type="checkbox"
            checked={current[key]}
            onChange={(event) => onChange({ ...current, [key]: event.target.checked })}
          />{' '}
          {label}
        </label>
      ))}
    </fieldset>
  );
}
