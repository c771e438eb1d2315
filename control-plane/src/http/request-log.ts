import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * One log line per request, when it is answered: method, path, status and time taken, in the
 * process's JSON format, with the request id the logger adds. Fastify's own request logging
 * (turned off in app.ts) writes two lines per request, the first before anything is known.
 */
export async function logRequest(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  req.log.info({ method: req.method, url: withoutTicket(req.url), status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
}

/** A download link's ticket stands for a session for a minute: it stays out of the log like a token. */
function withoutTicket(url: string): string {
  return url.replace(/([?&]ticket=)[^&]*/g, '$1[REDACTED]');
}
