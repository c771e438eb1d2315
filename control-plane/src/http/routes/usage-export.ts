import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FINISH_REASONS, GATEWAY_ENDPOINTS, Errors, type FinishReason, type GatewayEndpoint } from '@gateway/shared';
import type { AppContext } from '../../context.js';
import { usageExportPages, type ExportPage } from '../../db/usage-export.js';
import type { UsageFilter } from '../../db/usage.js';
import { principalOf, principalOfClaims } from '../../auth/require-auth.js';
import { EXPORT_TICKET_TTL_SECONDS, issueExportTicket, verifyExportTicket } from '../export-ticket.js';
import { attributionFilter, attributionQuerySchema, type AttributionQuery } from '../attribution-query.js';
import { recordQuerySchema, visibleProjects, type RecordListQuery } from '../record-list.js';
import { batchIdQuerySchema, ERROR_RESPONSES } from '../schemas.js';
import { spreadsheetLine, type CsvValue } from '../../csv/spreadsheet-csv.js';

/**
 * GET /v1/usage/export: every usage record the filters of GET /v1/usage select, as one CSV file
 * (a header row, then a row per record), streamed as PostgreSQL hands over pages, so an export of
 * millions of rows holds one page in memory and starts downloading at once. Who may read what is
 * decided before the first byte, exactly as for the list; a database failure after that cuts the
 * download short (the response ends without its final chunk), which clients report as an error
 * rather than a short file.
 */
type ExportQuery = Omit<RecordListQuery, 'limit' | 'cursor'> & AttributionQuery & { finish_reason?: FinishReason; endpoint?: GatewayEndpoint; batch_id?: string };

export const EXPORT_COLUMNS = [
  'timestamp',
  'id',
  'request_id',
  'project_id',
  'project_name',
  'key_id',
  'key_name',
  'model',
  'provider',
  'endpoint',
  'input_tokens',
  'cached_tokens',
  'output_tokens',
  'total_tokens',
  'cost_usd',
  'latency_ms',
  'finish_reason',
  'provider_finish_reason',
  'stream',
  // Added at the end, so files read by column position keep their columns.
  'tags',
  'end_user',
  'cache_write_tokens',
  'requested_model',
  'batch_id',
] as const;

const { limit: _limit, cursor: _cursor, ...listProperties } = recordQuerySchema({
  finish_reason: { type: 'string', enum: FINISH_REASONS, description: 'Only records that ended this way.' },
  endpoint: { type: 'string', enum: GATEWAY_ENDPOINTS, description: 'Only records of requests on this gateway endpoint.' },
  ...attributionQuerySchema,
  batch_id: batchIdQuerySchema,
}).properties;

const exportQuerySchema = { type: 'object', additionalProperties: false, properties: listProperties } as const;
const downloadQuerySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['ticket'],
  properties: { ...listProperties, ticket: { type: 'string', minLength: 1, maxLength: 2048, description: 'The ticket of POST /v1/usage/export/links.' } },
} as const;
const csvAnswer = {
  200: { description: 'RFC 4180 CSV with a header row; cells a spreadsheet would run as formulas start with an apostrophe.', content: { 'text/csv': { schema: { type: 'string' } } } },
  ...ERROR_RESPONSES,
};

function* csvRows(page: ExportPage): Generator<string> {
  for (const r of page.rows) {
    const row: Record<(typeof EXPORT_COLUMNS)[number], CsvValue> = {
      timestamp: new Date(Number(r.ts)).toISOString(),
      id: r.id,
      request_id: r.request_id,
      project_id: r.project_id,
      project_name: page.projectNames.get(r.project_id) ?? null,
      key_id: r.key_id,
      key_name: page.keyNames.get(r.key_id) ?? null,
      model: r.model,
      provider: r.provider,
      endpoint: r.endpoint,
      input_tokens: r.input_tokens,
      cached_tokens: r.cached_tokens,
      output_tokens: r.output_tokens,
      total_tokens: r.total_tokens,
      // numeric(20, 10) as PostgreSQL writes it: exact, for a spreadsheet to sum.
      cost_usd: r.cost_usd,
      latency_ms: r.latency_ms,
      finish_reason: r.finish_reason,
      provider_finish_reason: r.provider_finish_reason,
      stream: r.stream,
      tags: tagsCell(r.tags),
      end_user: r.end_user,
      cache_write_tokens: r.cache_write_tokens,
      requested_model: r.requested_model,
      batch_id: r.batch_id,
    };
    yield spreadsheetLine(EXPORT_COLUMNS.map((c) => row[c]));
  }
}

/** Tags as the x-gateway-tags header writes them (`team=search,feature=rag`); empty when none. */
function tagsCell(tags: Record<string, string>): string | null {
  const keys = Object.keys(tags);
  return keys.length === 0 ? null : keys.map((k) => `${k}=${tags[k]}`).join(',');
}

/** `usage-2026-11-23T1305Z.csv`: sortable, and the same on every filesystem (no colons). */
export function exportFileName(now: Date): string {
  return `usage-${now.toISOString().slice(0, 16).replace(':', '')}Z.csv`;
}

export function registerUsageExportRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: ExportQuery }>(
    '/v1/usage/export',
    {
      schema: {
        tags: ['records'],
        summary: 'Every usage record the filters select, as a CSV download (newest first unless order_asc=timestamp)',
        querystring: exportQuerySchema,
        response: csvAnswer,
      },
    },
    (req, reply) => sendExport(ctx, req, reply, req.query),
  );

  // A link for the browser to follow: the ticket stands for the caller's session for a minute.
  app.post(
    '/v1/usage/export/links',
    {
      schema: {
        tags: ['records'],
        summary: 'A one-minute download link for GET /v1/usage/export, for browsers',
        description:
          'The answer\'s `url` (relative to the control plane) downloads the export as the signed-in caller without an Authorization header: add the export\'s filters to it. A browser then streams the file to disk instead of holding it in memory. The link is refused after `expires_in` seconds, and at once when the session ends.',
        response: {
          201: {
            type: 'object',
            required: ['url', 'expires_in'],
            properties: { url: { type: 'string' }, expires_in: { type: 'integer', description: 'Seconds.' } },
          },
          ...ERROR_RESPONSES,
        },
      },
    },
    async (req, reply) => {
      const ticket = await issueExportTicket(ctx.jwt, principalOf(req).token);
      return reply.status(201).send({ url: `/v1/usage/export/download?ticket=${ticket}`, expires_in: EXPORT_TICKET_TTL_SECONDS });
    },
  );
}

/**
 * GET /v1/usage/export/download: the export by a link of POST /v1/usage/export/links, outside the
 * bearer-token routes (a link carries no header); the ticket authenticates the request instead.
 */
export function registerUsageDownloadRoute(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Querystring: ExportQuery & { ticket: string } }>(
    '/v1/usage/export/download',
    {
      schema: {
        tags: ['records'],
        summary: 'The CSV export, authenticated by the ticket of a download link instead of a bearer token',
        querystring: downloadQuerySchema,
        response: csvAnswer,
      },
    },
    async (req, reply) => {
      const { ticket, ...query } = req.query;
      req.principal = await principalOfClaims(ctx, await verifyExportTicket(ctx.jwt, ticket));
      return sendExport(ctx, req, reply, query);
    },
  );
}

async function sendExport(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, q: ExportQuery): Promise<FastifyReply> {
  if (q.order_desc !== undefined && q.order_asc !== undefined) {
    throw Errors.orderBothWays();
  }
  if (q.from !== undefined && q.to !== undefined && q.from > q.to) {
    throw Errors.fromAfterTo();
  }
  const projectIds = await visibleProjects(ctx, req, q.project_id);
  const filter: UsageFilter = { keyId: q.key_id, model: q.model, provider: q.provider, finishReason: q.finish_reason, endpoint: q.endpoint, batchId: q.batch_id, ...attributionFilter(q) };
  const scope = { projectIds, order: q.order_asc !== undefined ? ('asc' as const) : ('desc' as const), from: q.from, to: q.to };
  async function* lines(): AsyncGenerator<string> {
    yield spreadsheetLine(EXPORT_COLUMNS);
    if (projectIds !== null && projectIds.length === 0) return;
    for await (const page of usageExportPages(ctx.sql, scope, filter)) yield* csvRows(page);
  }
  void reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${exportFileName(new Date())}"`)
    .header('cache-control', 'no-store');
  // Readable.from pulls the next page only when the client has taken the last: backpressure.
  return reply.send(Readable.from(lines()));
}
