import { describe, expect, it } from 'vitest';
import { clientAddress, parseTrustedProxies } from './trusted-proxies.js';

describe('parseTrustedProxies', () => {
  it('trusts nobody by default', () => {
    for (const value of [undefined, '', ' , ']) {
      const none = parseTrustedProxies(value);
      expect(none.entries).toEqual([]);
      expect(none.trusts('127.0.0.1')).toBe(false);
    }
  });

  it('matches IPv4 and IPv6 addresses and CIDRs, mapped and zoned forms included', () => {
    const trusted = parseTrustedProxies(' 127.0.0.1, 10.0.0.0/8 ,fd00::/8,::1, 192.168.1.0/24');
    expect(trusted.entries).toEqual(['127.0.0.1', '10.0.0.0/8', 'fd00::/8', '::1', '192.168.1.0/24']);
    for (const yes of ['127.0.0.1', '10.255.0.3', '::ffff:10.1.2.3', '::ffff:127.0.0.1', 'fd12:3456::1', '::1', '0:0:0:0:0:0:0:1', '192.168.1.200']) {
      expect(trusted.trusts(yes), yes).toBe(true);
    }
    for (const no of ['127.0.0.2', '11.0.0.1', '192.168.2.1', 'fe80::1', '2001:db8::1', 'localhost', '', 'unknown', '10.0.0.1/8']) {
      expect(trusted.trusts(no), no).toBe(false);
    }
    const zoned = parseTrustedProxies('fe80::/10');
    expect(zoned.trusts('fe80::1%eth0')).toBe(true);
  });

  it('names the entry it cannot read', () => {
    expect(() => parseTrustedProxies('10.0.0.0/8, proxy.internal')).toThrow('"proxy.internal" is not an IP address or CIDR');
    expect(() => parseTrustedProxies('10.0.0.0/33')).toThrow('"10.0.0.0/33" has a prefix length outside 0–32');
    expect(() => parseTrustedProxies('::/129')).toThrow(/outside 0–128/);
    expect(() => parseTrustedProxies('10.0.0.0/')).toThrow(/prefix length/);
    expect(() => parseTrustedProxies('10.0.0.0/-1')).toThrow(/prefix length/);
    expect(() => parseTrustedProxies('256.0.0.1')).toThrow(/not an IP address/);
  });
});

describe('clientAddress', () => {
  const lb = parseTrustedProxies('127.0.0.1, 10.0.0.0/8, fd00::/8');
  const none = parseTrustedProxies(undefined);

  it('is the peer when the peer is not trusted, whatever the header says', () => {
    expect(clientAddress('203.0.113.9', '1.1.1.1', lb)).toBe('203.0.113.9');
    expect(clientAddress('127.0.0.1', '1.1.1.1', none)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', undefined, lb)).toBe('127.0.0.1');
  });

  it('takes the rightmost untrusted hop: entries a client put in front prove nothing', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.7', lb)).toBe('198.51.100.7');
    // The client forged "6.6.6.6"; the balancer appended the address it really saw.
    expect(clientAddress('127.0.0.1', '6.6.6.6, 198.51.100.7', lb)).toBe('198.51.100.7');
    // Two trusted proxies in a row are skipped.
    expect(clientAddress('10.0.0.2', '6.6.6.6, 198.51.100.7, 10.0.0.1', lb)).toBe('198.51.100.7');
    expect(clientAddress('::ffff:127.0.0.1', '2001:db8::5, fd00::3', lb)).toBe('2001:db8::5');
  });

  it('takes the leftmost hop when every hop is trusted', () => {
    expect(clientAddress('127.0.0.1', '10.0.0.9, 10.0.0.1', lb)).toBe('10.0.0.9');
  });

  it('reads ports and brackets, skips empty entries, and stops at garbage on the last known hop', () => {
    expect(clientAddress('127.0.0.1', '198.51.100.7:51234', lb)).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', '[2001:db8::5]:443', lb)).toBe('2001:db8::5');
    expect(clientAddress('127.0.0.1', ' 198.51.100.7 , , ', lb)).toBe('198.51.100.7');
    expect(clientAddress('127.0.0.1', '', lb)).toBe('127.0.0.1');
    expect(clientAddress('127.0.0.1', '198.51.100.7, unknown', lb)).toBe('127.0.0.1');
    expect(clientAddress('10.0.0.2', '198.51.100.7, garbage, 10.0.0.1', lb)).toBe('10.0.0.1');
    expect(clientAddress('127.0.0.1', '[10.0.0.1]:80', lb)).toBe('127.0.0.1');
  });
});
