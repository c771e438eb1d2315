import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where a URL a tenant gave may not lead: every address that is not a public unicast one (RFC 6890
 * and the IANA special-purpose registries). A project webhook (control plane) or a webhook guard
 * (proxy) is a request the gateway makes on a tenant's behalf from inside the operator's network;
 * without this rule it reaches the metadata service, the database or the admin port of anything
 * beside it. Both services apply it twice: when the URL is saved and when it is called.
 */
const blocked = new BlockList();
const IPV4: [string, number][] = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const IPV6: [string, number][] = [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID, …)
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];
for (const [net, prefix] of IPV4) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of IPV6) blocked.addSubnet(net, prefix, 'ipv6');

/** True for an address a tenant's URL may reach. IPv4-mapped and embedded IPv4 are judged as IPv4. */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  const embedded = embeddedIpv4(address);
  if (embedded !== null) return !blocked.check(embedded, 'ipv4');
  // BlockList also matches IPv4-mapped addresses (::ffff:a.b.c.d) against the IPv4 rules.
  return !blocked.check(address, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96), NAT64 (64:ff9b::/96) or 6to4 (2002::/16) address. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (groups === null) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const zero = (from: number, to: number) => groups.slice(from, to).every((g) => g === 0);
  if (zero(0, 5) && groups[5] === 0xffff) return v4(groups[6]!, groups[7]!);
  if (zero(0, 6) && !(groups[6] === 0 && groups[7] !== undefined && groups[7] <= 1)) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x64 && groups[1] === 0xff9b && zero(2, 6)) return v4(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  return null;
}

function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase().split('%')[0] ?? '';
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    const parts = (dotted[1] as string).split('.').map(Number);
    text = text.slice(0, -dotted[0].length) + `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const [head, tail, ...rest] = text.split('::');
  if (rest.length > 0) return null;
  const parse = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...new Array<number>(Math.max(0, fill)).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

/** A refused destination: the error a lookup or a check gives, with a code callers decide on. */
export class AddressNotAllowed extends Error {
  readonly code = 'EADDRNOTALLOWED';
  constructor(readonly host: string) {
    super('the host resolves to a private, loopback, link-local or otherwise non-public address');
  }
}

/** The host of a URL as connect() takes it: IPv6 literals without their brackets. */
export function bareHost(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** True when the URL's host is an address literal outside the rule (a socket makes no lookup for it). */
export function refusedLiteral(url: URL): boolean {
  const host = bareHost(url);
  return isIP(host) !== 0 && !isPublicAddress(host);
}

export type Resolver = (host: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (host) =>
  new Promise((resolve, reject) => dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

const UNRESOLVED = new Set(['ENOTFOUND', 'EAI_AGAIN', 'ENODATA', 'EAI_NONAME', 'ESERVFAIL']);

/**
 * The check at creation: an address literal must be public, and so must every address a name
 * resolves to now. A name that does not resolve is let through (its record may come later); the
 * call checks again whatever it resolves to then.
 */
export async function checkHostAtCreation(host: string, resolve: Resolver = systemResolver): Promise<void> {
  if (isIP(host) !== 0) {
    if (!isPublicAddress(host)) throw new AddressNotAllowed(host);
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(host);
  } catch (err) {
    if (UNRESOLVED.has((err as NodeJS.ErrnoException).code ?? '')) return;
    throw err;
  }
  if (addresses.some((a) => !isPublicAddress(a.address))) throw new AddressNotAllowed(host);
}

/**
 * The `lookup` of an outbound agent's sockets: resolves the name and hands the socket only
 * addresses that passed the rule, so the address connected to is the address checked. A name
 * that resolved to a public address when the URL was saved and to 127.0.0.1 since (DNS
 * rebinding) is refused here. Any non-public address among the answers refuses the whole name.
 * An address literal is connected to without a lookup: check it with `refusedLiteral` first.
 */
export function guardedLookup(resolve: Resolver = systemResolver): LookupFunction {
  return ((hostname: string, options: { all?: boolean; family?: number | string }, callback: (...args: unknown[]) => void) => {
    resolve(hostname).then(
      (all) => {
        if (all.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }));
        if (all.some((a) => !isPublicAddress(a.address))) return callback(new AddressNotAllowed(hostname));
        const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : Number(options.family ?? 0);
        const usable = family === 4 || family === 6 ? all.filter((a) => a.family === family) : all;
        if (usable.length === 0) return callback(Object.assign(new Error(`no IPv${family} address for ${hostname}`), { code: 'ENOTFOUND' }));
        if (options.all) return callback(null, usable);
        const first = usable[0] as LookupAddress;
        return callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err),
    );
  }) as unknown as LookupFunction;
}
