import type { FastifyInstance } from 'fastify';
import { FINISH_REASONS, GATEWAY_ENDPOINTS, Errors, type FinishReason, type GatewayEndpoint } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { listUsage } from '../../db/usage.js';
import { emptyFigures, SUMMARY_GROUPS, summariseUsage, type SummaryGrouping, type UsageSummary } from '../../db/usage-summary.js';
import { attributionFilter, attributionQuerySchema, type AttributionQuery } from '../attribution-query.js';
import { recordPage, recordQuerySchema, visibleProjects, type RecordListQuery } from '../record-list.js';
import { batchIdQuerySchema, ERROR_RESPONSES, pageOf, ref } from '../schemas.js';
import { registerUsageExportRoute } from './usage-export.js';
import { registerUsageSeriesRoute } from './usage-series.js';

/**
 * GET /v1/usage: one record per request that reached a provider, keyset-paged.
 * GET /v1/usage/summary: their sums per project, model, provider, key or endpoint.
 * GET /v1/usage/export: all of them as CSV (usage-export.ts).
 * GET /v1/usage/series: their sums per time bucket (usage-series.ts).
 */
type UsageQuery = RecordListQuery & AttributionQuery & { finish_reason?: FinishReason; endpoint?: GatewayEndpoint; batch_id?: string };

type SummaryQuerystring = Pick<RecordListQuery, 'project_id' | 'key_id' | 'model' | 'provider' | 'from' | 'to'> &
  AttributionQuery & {
    finish_reason?: FinishReason;
    endpoint?: GatewayEndpoint;
    group_by: SummaryGrouping;
  };


/** The summary's groups: a record column, the end user, or one tag's value (`tag:team`). */
const SUMMARY_GROUPING = new RegExp(`^(${[...SUMMARY_GROUPS, 'end_user'].join('|')}|tag:[a-z0-9_.-]{1,32})$`);

const usageFilters = {
  finish_reason: { type: 'string', enum: FINISH_REASONS, description: 'Only records that ended this way.' },
  endpoint: { type: 'string', enum: GATEWAY_ENDPOINTS, description: 'Only records of requests on this gateway endpoint.' },
  ...attributionQuerySchema,
} as const;

const { project_id, key_id, model, provider, from, to } = recordQuerySchema({}).properties;

const summaryQuerySchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    project_id,
    key_id,
    model,
    provider,
    ...usageFilters,
    from,
    to,
    group_by: {
      type: 'string',
      pattern: SUMMARY_GROUPING.source,
      default: 'model',
      description: `What each entry of \`data\` sums over: ${SUMMARY_GROUPS.join(', ')}, \`end_user\`, or \`tag:<key>\` (the value of one tag, e.g. \`tag:team\`). Records without the end user or tag are the group named null.`,
    },
  },
} as const;

export function registerUsageRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: UsageQuery }>(
    '/v1/usage',
    {
      schema: {
        tags: ['records'],
        summary: 'Usage records, newest first unless order_asc=timestamp',
        querystring: recordQuerySchema({ ...usageFilters, batch_id: batchIdQuerySchema }),
        response: { 200: pageOf('UsageRecord'), ...ERROR_RESPONSES },
      },
    },
    async (req) =>
      recordPage(ctx, req, 'usage', req.query, (page) =>
        listUsage(ctx.sql, page, {
          keyId: req.query.key_id,
          model: req.query.model,
          provider: req.query.provider,
          finishReason: req.query.finish_reason,
          endpoint: req.query.endpoint,
          batchId: req.query.batch_id,
          ...attributionFilter(req.query),
        }),
      ),
  );

  app.get<{ Querystring: SummaryQuerystring }>(
    '/v1/usage/summary',
    {
      schema: {
        tags: ['records'],
        summary: 'Requests, tokens and cost of the usage records the filters select, per group and in total',
        querystring: summaryQuerySchema,
        response: { 200: ref('UsageSummary'), ...ERROR_RESPONSES },
      },
    },
    async (req): Promise<UsageSummary> => {
      const q = req.query;
      if (!SUMMARY_GROUPING.test(q.group_by)) {
        throw Errors.badGroupBy(SUMMARY_GROUPS.join(', '));
      }
      const filter = attributionFilter(q);
      if (q.from !== undefined && q.to !== undefined && q.from > q.to) {
        throw Errors.fromAfterTo();
      }
      const projectIds = await visibleProjects(ctx, req, q.project_id);
      if (projectIds !== null && projectIds.length === 0) return { data: [], totals: emptyFigures() };
      return summariseUsage(
        ctx.sql,
        { projectIds, groupBy: q.group_by, from: q.from, to: q.to },
        { keyId: q.key_id, model: q.model, provider: q.provider, finishReason: q.finish_reason, endpoint: q.endpoint, ...filter },
      );
    },
  );

  registerUsageExportRoute(app, ctx);
  registerUsageSeriesRoute(app, ctx);
}
