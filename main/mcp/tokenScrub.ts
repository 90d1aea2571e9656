import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';

/*
 * Issue 33: a signed-in HTTP server's own OAuth tokens kept out of what it says. A server may echo the
 * credentials it was called with (a debugging tool, an error quoting its request); the session's redactor
 * knows the provider keys, the environment's and .env secrets, and credential formats in context ("Bearer …",
 * a `token` key), not these bare values (kept encrypted in the home, renewed by the SDK at any request). So
 * everything a connection hands on passes through the tokens in force at that moment.
 */

/** Shortest value replaced: a token is long; a short value would replace ordinary words. */
const MIN_SECRET_CHARS = 8;

/** The access and refresh tokens `auth` holds now (none without a grant). */
export async function grantSecrets(auth: OAuthClientProvider | undefined): Promise<string[]> {
  const tokens = await auth?.tokens();
  return [tokens?.access_token, tokens?.refresh_token].filter(
    (value): value is string => typeof value === 'string' && value.length >= MIN_SECRET_CHARS,
  );
}

/**
 * Pure: `value` (JSON-shaped: strings, arrays, plain objects) with every occurrence of each secret in its
 * strings replaced by `[REDACTED:<label>]`, the redactor's mark; anything else is kept as it is.
 */
export function scrubSecrets<T>(value: T, secrets: readonly string[], label: string): T {
  const usable = secrets.filter((secret) => secret.length >= MIN_SECRET_CHARS);
  if (usable.length === 0) return value;
  const mark = `[REDACTED:${label}]`;
  const walk = (item: unknown): unknown => {
    if (typeof item === 'string') return usable.reduce((text, secret) => text.split(secret).join(mark), item);
    if (Array.isArray(item)) return item.map(walk);
    if (item !== null && typeof item === 'object' && Object.getPrototypeOf(item) === Object.prototype)
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, walk(inner)]));
    return item;
  };
  return walk(value) as T;
}
