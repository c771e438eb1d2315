import type { FastifyRequest } from 'fastify';
import { clientAddress, type TrustedProxies } from '@gateway/shared';

/**
 * onRequest hook: settles the client's address once, by the shared rule (TRUST_PROXY, see
 * shared/src/net/trusted-proxies.ts), and makes it the request's `ip`, so every reader (audit
 * `client_ip`, the sign-in throttle, logs) sees the same address. Fastify's own `trustProxy`
 * would walk X-Forwarded-For with a second implementation of the rule; one is enough.
 */
export function resolveClientAddress(trusted: TrustedProxies) {
  return async (req: FastifyRequest): Promise<void> => {
    const peer = req.socket.remoteAddress ?? '';
    const forwarded = req.headers['x-forwarded-for'];
    const ip = clientAddress(peer, Array.isArray(forwarded) ? forwarded.join(',') : forwarded, trusted);
    // An own property shadows Fastify's prototype getter (which reads the socket only).
    Object.defineProperty(req, 'ip', { value: ip, enumerable: true, configurable: true });
  };
}
