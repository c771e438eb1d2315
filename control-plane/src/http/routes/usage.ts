import type { FastifyInstance } from 'fastify';
import { FINISH_REASONS, type FinishReason } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { listUsage } from '../../db/usage.js';
import { recordPage, recordQuerySchema, type RecordListQuery } from '../record-list.js';
import { ERROR_RESPONSES, pageOf } from '../schemas.js';

/** GET /v1/usage: one record per request that reached a provider, keyset-paged. */
type UsageQuery = RecordListQuery & { finish_reason?: FinishReason };

export function registerUsageRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: UsageQuery }>(
    '/v1/usage',
    {
      schema: {
        tags: ['records'],
        summary: 'Usage records, newest first unless order_asc=timestamp',
        querystring: recordQuerySchema({ finish_reason: { type: 'string', enum: FINISH_REASONS, description: 'Only records that ended this way.' } }),
        response: { 200: pageOf('UsageRecord'), ...ERROR_RESPONSES },
      },
    },
    async (req) =>
      recordPage(ctx, req, 'usage', req.query, (page) =>
        listUsage(ctx.sql, page, { keyId: req.query.key_id, model: req.query.model, provider: req.query.provider, finishReason: req.query.finish_reason }),
      ),
  );
}
