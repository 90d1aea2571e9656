import type { JSX } from 'react';
import type { SettingsValue } from '../../../../main/ipc/contract.js';
import { useApp } from '../../appContext.js';

/** The OpenAI-compatible endpoints settings name, with the provider's base URL as "Default" when it is not one. */
export function endpointsOf(settings: SettingsValue | undefined): { name: string; baseUrl: string }[] {
  const named = settings?.endpoints ?? [];
  const fallback = settings?.providers['openai-compatible']?.baseUrl;
  return fallback && !named.some((endpoint) => endpoint.baseUrl === fallback)
    ? [{ name: 'Default', baseUrl: fallback }, ...named]
    : [...named];
}

/**
 * Issue #37: picks one of Settings' OpenAI-compatible endpoints, which sets the base URL below it; "Another
 * URL" leaves the field to type one. Nothing when settings name none.
 */
export function EndpointSelect({
  idPrefix,
  baseUrl,
  onBaseUrl,
}: {
  idPrefix: string;
  baseUrl: string;
  onBaseUrl: (baseUrl: string) => void;
}): JSX.Element | null {
  const { settings } = useApp();
  const endpoints = endpointsOf(settings?.settings);
  if (endpoints.length === 0) return null;
  const current = endpoints.find((endpoint) => endpoint.baseUrl === baseUrl.trim());
  return (
    <div className="field">
      <label htmlFor={`${idPrefix}-endpoint`}>Endpoint</label>
      <select
        id={`${idPrefix}-endpoint`}
        value={current?.baseUrl ?? ''}
        onChange={(event) => {
          if (event.target.value) onBaseUrl(event.target.value);
        }}
      >
        {endpoints.map((endpoint) => (
          <option key={endpoint.name} value={endpoint.baseUrl}>
            {endpoint.name} ({endpoint.baseUrl})
          </option>
        ))}
        <option value="">Another URL (type it below)</option>
      </select>
    </div>
  );
}
