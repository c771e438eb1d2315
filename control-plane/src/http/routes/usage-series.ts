import type { FastifyInstance } from 'fastify';
import { FINISH_REASONS, GATEWAY_ENDPOINTS, Errors, type FinishReason, type GatewayEndpoint } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { usageSeries, type SeriesPoint } from '../../db/usage-series.js';
import { SUMMARY_GROUPS, type SummaryGroup } from '../../db/usage-summary.js';
import { attributionFilter, attributionQuerySchema, type AttributionQuery } from '../attribution-query.js';
import { recordQuerySchema, visibleProjects } from '../record-list.js';
import { ERROR_RESPONSES } from '../schemas.js';

/**
 * GET /v1/usage/series: the usage summary per time bucket, for charts. The range is required and
 * holds at most MAX_BUCKETS buckets, so one request is bounded whatever the range; only buckets
 * with records are listed.
 */
export const MAX_BUCKETS = 10_000;
const MIN_BUCKET_MS = 60_000;
/** UTC offsets run from −12:00 to +14:00. */
const MAX_OFFSET_MS = 14 * 3_600_000;

interface SeriesQuerystring extends AttributionQuery {
  project_id?: string;
  key_id?: string;
  model?: string;
  provider?: string;
  finish_reason?: FinishReason;
  endpoint?: GatewayEndpoint;
  from: number;
  to: number;
  bucket_ms: number;
  offset_ms: number;
  group_by: SummaryGroup;
}

const { project_id, key_id, model, provider, from, to } = recordQuerySchema({}).properties;

const querySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['from', 'to', 'bucket_ms'],
  properties: {
    project_id,
    key_id,
    model,
    provider,
    finish_reason: { type: 'string', enum: FINISH_REASONS, description: 'Only records that ended this way.' },
    endpoint: { type: 'string', enum: GATEWAY_ENDPOINTS, description: 'Only records of requests on this gateway endpoint.' },
    ...attributionQuerySchema,
    from,
    to,
    bucket_ms: { type: 'integer', minimum: MIN_BUCKET_MS, maximum: 366 * 86_400_000, description: `Width of a bucket in ms (at least a minute; at most ${MAX_BUCKETS} buckets in the range).` },
    offset_ms: { type: 'integer', minimum: -MAX_OFFSET_MS, maximum: MAX_OFFSET_MS, default: 0, description: "Buckets start at multiples of bucket_ms shifted by this (the client's UTC offset, for buckets that start at its midnight)." },
    group_by: { type: 'string', enum: SUMMARY_GROUPS, default: 'model', description: 'What each point sums over besides its bucket.' },
  },
} as const;

const figures = {
  requests: { type: 'integer' },
  tokens: {
    type: 'object',
    required: ['input', 'output', 'total', 'cached'],
    properties: { input: { type: 'integer' }, output: { type: 'integer' }, total: { type: 'integer' }, cached: { type: 'integer' } },
  },
  cost_usd: { type: ['number', 'null'], description: 'US dollars; null only when no record counted here has a cost.' },
} as const;

const responseSchema = {
  type: 'object',
  required: ['bucket_ms', 'offset_ms', 'data'],
  properties: {
    bucket_ms: { type: 'integer' },
    offset_ms: { type: 'integer' },
    data: {
      type: 'array',
      description: 'One point per bucket and group with records, oldest bucket first.',
      items: {
        type: 'object',
        required: ['start', 'requests', 'tokens', 'cost_usd'],
        properties: {
          start: { type: 'integer', description: 'Start of the bucket, Unix ms.' },
          project: { type: 'string', format: 'uuid' },
          model: { type: 'string' },
          provider: { type: 'string' },
          key: { type: 'string', format: 'uuid' },
          endpoint: { type: 'string', enum: GATEWAY_ENDPOINTS },
          ...figures,
        },
      },
    },
  },
} as const;

export function registerUsageSeriesRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: SeriesQuerystring }>(
    '/v1/usage/series',
    {
      schema: {
        tags: ['records'],
        summary: 'Requests, tokens and cost of the usage records the filters select, per time bucket and group',
        querystring: querySchema,
        response: { 200: responseSchema, ...ERROR_RESPONSES },
      },
    },
    async (req): Promise<{ bucket_ms: number; offset_ms: number; data: SeriesPoint[] }> => {
      const q = req.query;
      if (q.from >= q.to) throw Errors.fromNotBeforeTo();
      if ((q.to - q.from) / q.bucket_ms > MAX_BUCKETS) {
        throw Errors.tooManyBuckets(MAX_BUCKETS);
      }
      const answer = { bucket_ms: q.bucket_ms, offset_ms: q.offset_ms };
      const projectIds = await visibleProjects(ctx, req, q.project_id);
      if (projectIds !== null && projectIds.length === 0) return { ...answer, data: [] };
      const data = await usageSeries(
        ctx.sql,
        { projectIds, groupBy: q.group_by, from: q.from, to: q.to, bucketMs: q.bucket_ms, offsetMs: q.offset_ms },
        { keyId: q.key_id, model: q.model, provider: q.provider, finishReason: q.finish_reason, endpoint: q.endpoint, ...attributionFilter(q) },
      );
      return { ...answer, data };
    },
  );
}
