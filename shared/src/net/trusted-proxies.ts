import { BlockList, isIP } from 'node:net';

/**
 * Which peers may tell us who the client is. Behind a load balancer every TCP connection comes
 * from the balancer, and the client's address only arrives in `X-Forwarded-For`, a header any
 * client can also send itself. The header is therefore believed only from a trusted peer, and
 * only as far as the chain of trusted hops reaches (the rightmost-untrusted rule).
 *
 * Matching is node:net's BlockList, which also matches IPv4-mapped IPv6 peers
 * (`::ffff:10.0.0.1`) against IPv4 entries, as a dual-stack listener reports them.
 */
export interface TrustedProxies {
  /** The entries as configured, for logs and messages. */
  readonly entries: readonly string[];
  trusts(address: string): boolean;
}

export const NO_TRUSTED_PROXIES: TrustedProxies = { entries: [], trusts: () => false };

/**
 * Parses a comma-separated list of addresses and CIDRs (`10.0.0.0/8, 127.0.0.1, fd00::/8`).
 * Empty or undefined: no proxy is trusted. Throws an Error naming the first bad entry.
 */
export function parseTrustedProxies(value: string | undefined): TrustedProxies {
  const entries = (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  if (entries.length === 0) return NO_TRUSTED_PROXIES;
  const list = new BlockList();
  for (const entry of entries) addEntry(list, entry);
  return { entries, trusts: (address) => matches(list, address) };
}

function addEntry(list: BlockList, entry: string): void {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0 || address.includes('%')) throw new Error(`"${entry}" is not an IP address or CIDR`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (slash === -1) {
    list.addAddress(address, type);
    return;
  }
  const bits = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) throw new Error(`"${entry}" has a prefix length outside 0–${max}`);
  list.addSubnet(address, Number(bits), type);
}

function matches(list: BlockList, address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // A zone index (fe80::1%eth0) names the interface, not the address.
  return list.check(family === 6 ? address.replace(/%.*$/, '') : address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The client's address: the TCP peer, unless the peer is a trusted proxy; then `X-Forwarded-For`
 * is walked from the right (each proxy appends the address it saw), skipping trusted hops, and
 * the first untrusted one is the client. Entries to its left were written by that client and
 * prove nothing. When every hop is trusted the leftmost is the client. An entry that is not an
 * address (a proxy wrote `unknown`, or the header is garbled) ends the walk at the last hop that
 * is known, so a client can never choose its own address.
 */
export function clientAddress(peer: string, forwardedFor: string | undefined, trusted: TrustedProxies): string {
  if (forwardedFor === undefined || !trusted.trusts(peer)) return peer;
  const hops = forwardedFor.split(',');
  let client = peer;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hopAddress(hops[i] as string);
    if (hop === '') continue;
    if (hop === null) return client;
    client = hop;
    if (!trusted.trusts(hop)) return hop;
  }
  return client;
}

/** An address from one header entry: bare, `1.2.3.4:port` or `[v6]:port`. '' for an empty entry, null for garbage. */
function hopAddress(entry: string): string | null {
  const text = entry.trim();
  if (text === '') return '';
  if (isIP(text) !== 0) return text;
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(text);
  if (bracketed !== null) return isIP(bracketed[1] as string) === 6 ? (bracketed[1] as string) : null;
  const withPort = /^([\d.]+):\d{1,5}$/.exec(text);
  if (withPort !== null) return isIP(withPort[1] as string) === 4 ? (withPort[1] as string) : null;
  return null;
}
