/**
 * The TCP peer's address as text, in the exact form uWebSockets.js's `getRemoteAddressAsText`
 * gives (`a.b.c.d` from an IPv4 socket, eight groups of four lower-case hex digits from an IPv6
 * one, IPv4-mapped included), built from `getRemoteAddress`'s bytes. The library's own text call
 * formats with snprintf and copies into a fresh ArrayBuffer, about three times the cost of the
 * binary call; here the text of an address already seen is looked up instead, as most requests
 * come from a few load balancers or clients.
 */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const known = new Map<number, string>();
const knownMapped = new Map<number, string>();
/** Each memo holds at most this many addresses; past it, it starts again (a scan is not a leak). */
const MEMO_LIMIT = 4096;

export function peerAddressText(address: ArrayBuffer): string {
  const length = address.byteLength;
  if (length === 0) return '';
  const b = new Uint8Array(address);
  if (length === 4) return remembered(known, b, 0, ipv4Text);
  if (length === 16 && isIpv4Mapped(b)) return remembered(knownMapped, b, 12, ipv6Text);
  return ipv6Text(b);
}

function remembered(memo: Map<number, string>, b: Uint8Array, at: number, format: (b: Uint8Array) => string): string {
  const key = ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;
  let text = memo.get(key);
  if (text === undefined) {
    if (memo.size >= MEMO_LIMIT) memo.clear();
    text = format(b);
    memo.set(key, text);
  }
  return text;
}

function isIpv4Mapped(b: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return false;
  return b[10] === 0xff && b[11] === 0xff;
}

function ipv4Text(b: Uint8Array): string {
  return `${b[0]}.${b[1]}.${b[2]}.${b[3]}`;
}

function ipv6Text(b: Uint8Array): string {
  let text = HEX[b[0]!]! + HEX[b[1]!]!;
  for (let i = 2; i < 16; i += 2) text += `:${HEX[b[i]!]!}${HEX[b[i + 1]!]!}`;
  return text;
}
