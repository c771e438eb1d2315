import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestFacts } from '../db/audit-writer.js';

/** What an audit event records about the HTTP request behind a management action. */
const MAX_USER_AGENT = 512;

export function requestFacts(req: FastifyRequest, reply: FastifyReply): RequestFacts {
  const agent = req.headers['user-agent'];
  return {
    requestId: req.id,
    // The client's address by the TRUST_PROXY rule, settled once per request (client-address.ts).
    clientIp: req.ip || null,
    userAgent: agent === undefined ? null : agent.slice(0, MAX_USER_AGENT),
    latencyMs: reply.elapsedTime,
  };
}
