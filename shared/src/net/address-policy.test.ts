import { lookup } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { AddressNotAllowed, checkHostAtCreation, guardedLookup, isPublicAddress, refusedLiteral, type Resolver } from './address-policy.js';

const fixed =
  (addresses: string[]): Resolver =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

describe('address rule of tenant URLs', () => {
  it('refuses private, loopback, link-local, multicast, unspecified and reserved addresses', () => {
    for (const address of [
      '127.0.0.1',
      '127.1.2.3',
      '10.0.0.1',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '239.255.255.250',
      '255.255.255.255',
      '240.0.0.1',
      '192.0.2.10',
      '198.18.0.1',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '::127.0.0.1',
      '64:ff9b::10.0.0.1',
      '2002:7f00:1::',
      '2001:db8::1',
      'not an address',
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it('lets public unicast addresses through, IPv4-mapped ones included', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.215.14', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::']) {
      expect(isPublicAddress(address), address).toBe(true);
    }
  });

  it('checks a host at creation: literals, every resolved address, and lets an unresolvable name through', async () => {
    await expect(checkHostAtCreation('127.0.0.1')).rejects.toBeInstanceOf(AddressNotAllowed);
    await expect(checkHostAtCreation('::1')).rejects.toBeInstanceOf(AddressNotAllowed);
    await expect(checkHostAtCreation('8.8.8.8')).resolves.toBeUndefined();
    await expect(checkHostAtCreation('localhost')).rejects.toBeInstanceOf(AddressNotAllowed);
    await expect(checkHostAtCreation('hooks.example.com', fixed(['93.184.215.14', '10.1.2.3']))).rejects.toBeInstanceOf(AddressNotAllowed);
    await expect(checkHostAtCreation('hooks.example.com', fixed(['93.184.215.14']))).resolves.toBeUndefined();
    const nxdomain: Resolver = async () => {
      throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' });
    };
    await expect(checkHostAtCreation('hooks.example.invalid', nxdomain)).resolves.toBeUndefined();
  });

  it('refuses a URL whose host is a non-public address literal, brackets and all', () => {
    for (const url of ['http://127.0.0.1:8080/x', 'https://169.254.169.254/latest/meta-data', 'http://[::1]:9/', 'http://[::ffff:10.0.0.1]/', 'http://0x7f000001/', 'http://2130706433/']) {
      expect(refusedLiteral(new URL(url)), url).toBe(true);
    }
    // Names are left to the lookup at connect time.
    for (const url of ['https://8.8.8.8/hook', 'http://[2606:4700:4700::1111]/', 'http://localhost:8080/', 'https://hooks.example.com/']) {
      expect(refusedLiteral(new URL(url)), url).toBe(false);
    }
  });

  it('gives a socket only checked addresses, resolving again at connect time', async () => {
    let answer = ['93.184.215.14'];
    const resolve: Resolver = async () => fixed(answer)('x');
    const guarded = guardedLookup(resolve);
    const call = (options: object) =>
      new Promise<{ err: unknown; address: unknown; family: unknown }>((done) =>
        (guarded as unknown as (h: string, o: object, cb: (err: unknown, address?: unknown, family?: unknown) => void) => void)('hooks.example.com', options, (err, address, family) =>
          done({ err, address, family }),
        ),
      );
    expect(await call({})).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect((await call({ all: true })).address).toEqual([{ address: '93.184.215.14', family: 4 }]);
    // The name now points inside (DNS rebinding): refused, though it was public a moment ago.
    answer = ['127.0.0.1'];
    expect((await call({})).err).toBeInstanceOf(AddressNotAllowed);
    answer = ['93.184.215.14', '::ffff:192.168.0.1'];
    expect((await call({ all: true })).err).toBeInstanceOf(AddressNotAllowed);
    // The system resolver by default: localhost is refused.
    const system = await new Promise<unknown>((done) => (guardedLookup() as unknown as typeof lookup)('localhost', {}, (err) => done(err)));
    expect(system).toBeInstanceOf(AddressNotAllowed);
  });
});
