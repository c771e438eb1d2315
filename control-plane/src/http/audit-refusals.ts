import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayError } from '@gateway/shared';
import type { AppContext } from '../context.js';
import { writeAudit } from '../db/audit-writer.js';
import { requestFacts } from './request-facts.js';

/**
 * Refused management actions are audited like successful ones, so a project's audit trail shows
 * who tried to delete its keys, not only who managed to. A route opts in by naming its event type
 * (`config: { auditType: 'key.deleted' }`); the successful case is written by the route itself, in
 * the transaction of the change. Only signed-in callers are recorded: an anonymous 401 names nobody.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    auditType?: string;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function auditRefusal(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, err: GatewayError): Promise<void> {
  const type = req.routeOptions.config?.auditType;
  if (type === undefined || req.principal === null) return;
  const params = (req.params ?? {}) as { id?: string; key_id?: string };
  try {
    await writeAudit(
      ctx.sql,
      {
        type,
        outcome: err.code === 'FORBIDDEN' ? 'policy_blocked' : 'error',
        status: err.status,
        errorCode: err.code,
        // Only well-formed ids: a malformed path parameter is the client's text, not a reference.
        projectId: params.id !== undefined && UUID.test(params.id) ? params.id : null,
        keyId: params.key_id !== undefined && UUID.test(params.key_id) ? params.key_id : null,
        actor: req.principal.userId,
      },
      requestFacts(req, reply),
    );
  } catch (auditErr) {
    // The caller still gets the original answer; the lost event is at least in the log.
    req.log.error({ err: { message: (auditErr as Error).message }, type }, 'could not audit a refused management action');
  }
}
