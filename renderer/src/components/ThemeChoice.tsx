import { useCallback, useState, type JSX } from 'react';
import type { Theme } from '../../../main/ipc/contract.js';
import { call, describeError } from '../api/call.js';
import { keel } from '../api/keel.js';
import { useApp } from '../appContext.js';

export const THEMES: readonly { value: Theme; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
];

/**
 * Issue #37: saves the theme in settings.json at once (a theme is seen, not drafted); returns an error's words
 * or undefined. The file's other settings are sent as main last returned them.
 */
export function useSaveTheme(): (theme: Theme) => Promise<string | undefined> {
  const { settings, applySettings } = useApp();
  return useCallback(
    async (theme: Theme) => {
      if (!settings) return 'settings are not loaded yet';
      try {
        applySettings(
          await call(keel().settings.set({ settings: { ...settings.settings, appearance: { theme } } })),
        );
        return undefined;
      } catch (error) {
        return describeError(error);
      }
    },
    [settings, applySettings],
  );
}

/** The theme as three radios (Settings → Appearance). */
export function ThemeChoice(): JSX.Element {
  const { settings } = useApp();
  const save = useSaveTheme();
  const [error, setError] = useState<string | undefined>();
  const current = settings?.settings.appearance?.theme ?? 'system';
  return (
    <fieldset className="theme-choice">
      <legend>Theme</legend>
      {THEMES.map((theme) => (
        <label key={theme.value}>
          <input
            type="radio"
            name="theme"
            value={theme.value}
            checked={current === theme.value}
            onChange={() => void save(theme.value).then(setError)}
          />{' '}
          {theme.label}
        </label>
      ))}
      <p className="hint">System follows your operating system’s light or dark setting.</p>
      {error ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}
