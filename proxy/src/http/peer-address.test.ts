import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { peerAddressText } from './peer-address.js';
import { loadUws, type us_listen_socket } from './uws.js';

function bytes(...values: number[]): ArrayBuffer {
  return new Uint8Array(values).buffer;
}

describe('peerAddressText', () => {
  it('writes IPv4 dotted and IPv6 as eight four-digit groups, as uWebSockets.js does', () => {
    expect(peerAddressText(bytes(10, 0, 255, 7))).toBe('10.0.255.7');
    expect(peerAddressText(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 1, 20))).toBe('0000:0000:0000:0000:0000:ffff:c0a8:0114');
    expect(peerAddressText(bytes(0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xab, 0xcd, 0, 1))).toBe('2001:0db8:0000:0000:0000:0000:abcd:0001');
    expect(peerAddressText(new ArrayBuffer(0))).toBe('');
  });

  it('answers a remembered address the same, and a different one differently', () => {
    expect(peerAddressText(bytes(10, 0, 0, 1))).toBe('10.0.0.1');
    expect(peerAddressText(bytes(10, 0, 0, 1))).toBe('10.0.0.1');
    expect(peerAddressText(bytes(10, 0, 0, 2))).toBe('10.0.0.2');
    // The same four bytes as an IPv4-mapped IPv6 address keep the IPv6 form.
    expect(peerAddressText(bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1))).toBe('0000:0000:0000:0000:0000:ffff:0a00:0001');
  });

  it('stays right past its memo bound', () => {
    for (let i = 0; i < 10_000; i++) {
      const a = (i >> 8) & 0xff;
      const b = i & 0xff;
      expect(peerAddressText(bytes(172, 16, a, b))).toBe(`172.16.${a}.${b}`);
    }
  });

  describe('against the library on a real socket', () => {
    const uws = loadUws();
    const sockets: us_listen_socket[] = [];
    afterAll(() => {
      for (const socket of sockets) uws.us_listen_socket_close(socket);
    });

    async function compare(listenHost: string, connectHost: string): Promise<void> {
      const app = uws.App();
      app.get('/*', (res) => {
        const ours = peerAddressText(res.getRemoteAddress());
        const theirs = Buffer.from(res.getRemoteAddressAsText()).toString('latin1');
        res.end(JSON.stringify({ ours, theirs }));
      });
      const port = await new Promise<number>((resolve, reject) => {
        app.listen(listenHost, 0, (socket) => {
          if (!socket) return reject(new Error(`cannot listen on ${listenHost}`));
          sockets.push(socket);
          resolve(uws.us_socket_local_port(socket));
        });
      });
      for (let i = 0; i < 2; i++) {
        const answer = (await (await request(`http://${connectHost}:${port}/`)).body.json()) as { ours: string; theirs: string };
        expect(answer.theirs).not.toBe('');
        expect(answer.ours).toBe(answer.theirs);
      }
    }

    it('on an IPv4 listener', () => compare('127.0.0.1', '127.0.0.1'));
    it('on a dual-stack listener, from IPv4 (mapped) and from IPv6', async () => {
      await compare('::', '127.0.0.1');
      await compare('::', '[::1]');
    });
  });
});
