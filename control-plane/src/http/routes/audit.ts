import type { FastifyInstance } from 'fastify';
import { AUDIT_OUTCOMES, GATEWAY_ENDPOINTS, type AuditOutcome, type GatewayEndpoint } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { listAudit } from '../../db/audit.js';
import { attributionFilter, attributionQuerySchema, type AttributionQuery } from '../attribution-query.js';
import { recordPage, recordQuerySchema, type RecordListQuery } from '../record-list.js';
import { batchIdQuerySchema, ERROR_RESPONSES, pageOf } from '../schemas.js';

/** GET /v1/audit: gateway requests and management actions, keyset-paged. */
type AuditQuery = RecordListQuery & AttributionQuery & { outcome?: AuditOutcome; type?: string; endpoint?: GatewayEndpoint; batch_id?: string };

export function registerAuditRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: AuditQuery }>(
    '/v1/audit',
    {
      schema: {
        tags: ['records'],
        summary: 'Audit events, newest first unless order_asc=timestamp',
        querystring: recordQuerySchema({
          outcome: { type: 'string', enum: AUDIT_OUTCOMES, description: 'Only events with this outcome.' },
          type: { type: 'string', minLength: 1, maxLength: 100, description: 'Only events of this type, e.g. `gateway.request`, `key.deleted`.' },
          endpoint: { type: 'string', enum: GATEWAY_ENDPOINTS, description: 'Only gateway requests on this endpoint.' },
          ...attributionQuerySchema,
          batch_id: batchIdQuerySchema,
        }),
        response: { 200: pageOf('AuditEvent'), ...ERROR_RESPONSES },
      },
    },
    async (req) =>
      recordPage(ctx, req, 'audit', req.query, (page) =>
        listAudit(ctx.sql, page, {
          keyId: req.query.key_id,
          model: req.query.model,
          provider: req.query.provider,
          outcome: req.query.outcome,
          type: req.query.type,
          endpoint: req.query.endpoint,
          batchId: req.query.batch_id,
          ...attributionFilter(req.query),
        }),
      ),
  );
}
