import { isHostAllowed } from '../sandbox/boxProxy.js';
import type { NetworkPolicy } from '../sandbox/box.js';

/*
 * A session's network policy for Keel's own HTTP to MCP servers (and their authorization servers), light to
 * load: sign-in and the transport share it, and the CLI's start-up does not pay for the MCP SDK.
 */

/** The host and port a URL connects to (default ports by scheme). */
function endpointOf(url: URL): { host: string; port: number } {
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port };
}

/** Why the session's network policy refuses `url`, or null when it allows it. */
export function networkRefusal(url: URL, network: NetworkPolicy): string | null {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `${url.protocol} is not http or https`;
  const { host, port } = endpointOf(url);
  const allow = network === 'none' ? [] : network.allow;
  if (isHostAllowed(allow, host, port)) return null;
  return `${host}:${port} is not on this session's network allowlist (allow it with --allow-host ${host}${url.port ? `:${port}` : ''})`;
}

/** fetch held to the network policy: every request checked, no redirect followed. */
export function guardedFetch(network: NetworkPolicy) {
  return (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const target = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
    const problem = networkRefusal(target, network);
    if (problem) return Promise.reject(new Error(problem));
    return fetch(input instanceof Request ? input : target, { ...init, redirect: 'manual' });
  };
}
