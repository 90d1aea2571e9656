import { lookup } from 'node:dns/promises';
import net from 'node:net';

/*
 * Where web_fetch may connect (issue #32). The same allowlist matcher as the box's proxy (boxProxy.ts's
 * isHostAllowed decides which hosts run without asking), and a stricter address rule: a fetch runs on the
 * host, outside the box, so it never reaches this machine or its local network (loopback, private,
 * link-local such as 169.254.169.254, carrier-grade NAT, unique-local, multicast, reserved), whatever name
 * leads there. The name is resolved once, every address it has is checked, and the connection goes to the
 * checked address (no second lookup a rebinding DNS server could answer differently).
 */

/** A URL web_fetch may try, split as the gate and the fetch need it. */
export type FetchUrl = { url: URL; host: string; port: number };

/** Longest URL accepted (browsers and servers commonly stop near 8 KB). */
const MAX_URL_CHARS = 8192;

/** Checks a URL before any approval or lookup: http(s) only, no credentials, a host. Pure. */
export function checkFetchUrl(text: string): { ok: true; target: FetchUrl } | { ok: false; message: string } {
  if (text.length > MAX_URL_CHARS)
    return { ok: false, message: `the URL is longer than ${MAX_URL_CHARS} characters` };
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return { ok: false, message: `"${text.slice(0, 200)}" is not an absolute URL (write https://host/path)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      ok: false,
      message: `${url.protocol} URLs are not fetched: web_fetch reads http:// and https:// pages only (read local files with read_file)`,
    };
  }
  if (url.username !== '' || url.password !== '') {
    return {
      ok: false,
      message: 'a URL with a user name or password in it is refused: web_fetch sends no credentials',
    };
  }
  const host = normalizeFetchHost(url.hostname);
  if (host === '') return { ok: false, message: 'the URL names no host' };
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  url.hash = '';
  return { ok: true, target: { url, host, port } };
}

/** A host as the allowlist compares it: lowercase, no IPv6 brackets, no trailing dot. */
export function normalizeFetchHost(host: string): string {
  return host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

const blocked = new net.BlockList();
const RANGES: [string, number, 'ipv4' | 'ipv6', string][] = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'reserved'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  ['fc00::', 7, 'ipv6', 'unique-local'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];
for (const [address, prefix, family] of RANGES) blocked.addSubnet(address, prefix, family);

/**
 * The kind of address this is when it belongs to this machine or a local network ('loopback', 'private',
 * 'link-local' …), undefined for a public address. IPv4 inside IPv6 (`::ffff:127.0.0.1`, NAT64
 * `64:ff9b::7f00:1`, the old `::127.0.0.1`) is judged by its IPv4 address. Pure.
 */
export function localAddressKind(address: string): string | undefined {
  const v4 = embeddedIpv4(address);
  const family =
    v4 !== undefined ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : net.isIPv4(address) ? 'ipv4' : undefined;
  if (family === undefined) return 'unparsable';
  const checked = v4 ?? address;
  if (!blocked.check(checked, family)) return undefined;
  const found = RANGES.find(([base, prefix, rangeFamily]) => {
    if (rangeFamily !== family) return false;
    const one = new net.BlockList();
    one.addSubnet(base, prefix, rangeFamily);
    return one.check(checked, family);
  });
  return found?.[3] ?? 'local';
}

/** The IPv4 address an IPv6 address carries (mapped, NAT64, compatible), or the address itself if IPv4. */
function embeddedIpv4(address: string): string | undefined {
  if (net.isIPv4(address)) return address;
  if (!net.isIPv6(address)) return undefined;
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::|::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::|::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (hex) {
    const high = parseInt(hex[1] as string, 16);
    const low = parseInt(hex[2] as string, 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return undefined;
}

/** Where to connect for a host: one checked address, or why not. */
export type FetchAddress = { address: string; family: 4 | 6 } | { refused: string };

/** Options of resolveFetchAddress. */
export type ResolveOptions = {
  /**
   * Test seam: exact addresses accepted although local (a test's loopback server). Only programmatic
   * options set it (HarnessOptions.webFetch), never a settings or project file.
   */
  testAddresses?: readonly string[];
  /** The resolver (tests); default the system's getaddrinfo. */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
};

/**
 * Resolves `host` once and checks every address it has: any local one refuses the fetch (a name with one
 * public and one loopback address would let the connection choose). Returns the first address, to which
 * the fetch connects.
 */
export async function resolveFetchAddress(host: string, options: ResolveOptions = {}): Promise<FetchAddress> {
  const name = normalizeFetchHost(host);
  let addresses: { address: string; family: number }[];
  if (net.isIP(name) !== 0) addresses = [{ address: name, family: net.isIP(name) }];
  else {
    try {
      addresses = await (options.resolve ?? ((h: string) => lookup(h, { all: true, verbatim: true })))(name);
    } catch {
      return { refused: `${name} does not resolve` };
    }
  }
  if (addresses.length === 0) return { refused: `${name} does not resolve` };
  const seam = new Set(options.testAddresses ?? []);
  for (const { address } of addresses) {
    const kind = localAddressKind(address);
    if (kind !== undefined && !seam.has(address)) {
      const via = address === name ? name : `${name} resolves to ${address}, which`;
      return {
        refused: `${via} is a ${kind} address: web_fetch never reaches this machine or its local network`,
      };
    }
  }
  const first = addresses[0] as { address: string; family: number };
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
