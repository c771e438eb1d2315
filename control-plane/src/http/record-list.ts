import type { FastifyRequest } from 'fastify';
import { Errors } from '@gateway/shared';
import { can, effectiveRole } from '../auth/permissions.js';
import { principalOf } from '../auth/require-auth.js';
import type { AppContext } from '../context.js';
import { findProjectForUser, projectExists, projectIdsOfUser } from '../db/projects.js';
import type { PageQuery } from '../db/record-page.js';
import type { CursorList } from './cursor.js';
import { projectNotFound } from './project-access.js';
import { uuidSchema } from './schemas.js';

/**
 * What GET /v1/usage and GET /v1/audit share: the query parameters, who may see which records,
 * and the keyset page envelope.
 */
export interface RecordListQuery {
  project_id?: string;
  limit: number;
  order_desc?: 'timestamp';
  order_asc?: 'timestamp';
  cursor?: string;
  key_id?: string;
  model?: string;
  provider?: string;
  from?: number;
  to?: number;
}

export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 50;

const ms = (description: string) => ({ type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description });
const text = (description: string) => ({ type: 'string', minLength: 1, maxLength: 200, description });

/** The query-string schema of a record list; `extra` adds the list's own filters. */
export function recordQuerySchema(extra: Record<string, object>) {
  return {
    type: 'object',
    additionalProperties: false,
    properties: {
      project_id: { ...uuidSchema, description: 'Only this project. Without it: every project the caller belongs to (account admins: everything).' },
      limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Records per page.' },
      order_desc: { type: 'string', enum: ['timestamp'], description: 'Newest first (the default).' },
      order_asc: { type: 'string', enum: ['timestamp'], description: 'Oldest first.' },
      cursor: { type: 'string', minLength: 1, maxLength: 512, description: '`next_cursor` of the previous page, with the same order.' },
      key_id: { ...uuidSchema, description: 'Only records of this key.' },
      model: text('Only records of this model.'),
      provider: text('Only records of this provider.'),
      from: ms('Only records at or after this Unix ms.'),
      to: ms('Only records before this Unix ms.'),
      ...extra,
    },
  } as const;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  has_more: boolean;
}

/**
 * Runs one page of a record list for the caller: checks the parameters that a schema cannot,
 * narrows the scope to what the caller may see, fetches one row more than asked to learn whether
 * more follow, and issues the cursor of the last row.
 */
export async function recordPage<T extends { id: string; timestamp: number }>(
  ctx: AppContext,
  req: FastifyRequest,
  list: CursorList,
  query: RecordListQuery,
  fetch: (page: PageQuery) => Promise<T[]>,
): Promise<Page<T>> {
  if (query.order_desc !== undefined && query.order_asc !== undefined) {
    throw Errors.orderBothWays();
  }
  if (query.from !== undefined && query.to !== undefined && query.from > query.to) {
    throw Errors.fromAfterTo();
  }
  const order = query.order_asc !== undefined ? 'asc' : 'desc';
  const after = query.cursor === undefined ? null : ctx.cursors.decode(query.cursor, list, order);
  const projectIds = await visibleProjects(ctx, req, query.project_id);
  if (projectIds !== null && projectIds.length === 0) return { data: [], next_cursor: null, has_more: false };

  const rows = await fetch({ projectIds, order, fetch: query.limit + 1, after, from: query.from, to: query.to });
  const hasMore = rows.length > query.limit;
  const data = hasMore ? rows.slice(0, query.limit) : rows;
  const last = data[data.length - 1];
  return {
    data,
    next_cursor: hasMore && last !== undefined ? ctx.cursors.encode(list, order, { ts: last.timestamp, id: last.id }) : null,
    has_more: hasMore,
  };
}

/**
 * null: no restriction (an account admin without project_id, gateway-level events included).
 * Otherwise the projects to read; a project the caller may not see is a 404, as anywhere else.
 */
export async function visibleProjects(ctx: AppContext, req: FastifyRequest, projectId: string | undefined): Promise<string[] | null> {
  const principal = principalOf(req);
  if (projectId !== undefined) {
    if (principal.role === 'admin') {
      // Admins may read the records of deleted projects too: that is what an audit trail is for.
      if (!(await projectExists(ctx.sql, projectId))) throw projectNotFound();
      return [projectId];
    }
    const found = await findProjectForUser(ctx.sql, projectId, principal.userId);
    if (found === null || !can(effectiveRole(principal.role, found.role), 'records.read')) throw projectNotFound();
    return [projectId];
  }
  return principal.role === 'admin' ? null : projectIdsOfUser(ctx.sql, principal.userId);
}
