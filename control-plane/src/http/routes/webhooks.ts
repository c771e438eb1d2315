import type { FastifyInstance } from 'fastify';
import { AddressNotAllowed, Errors, bareHost, checkHostAtCreation, type GatewayError } from '@gateway/shared';
import { principalOf } from '../../auth/require-auth.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import {
  countWebhooks,
  deleteWebhook,
  failPendingDeliveries,
  findWebhook,
  insertWebhook,
  listDeliveries,
  listWebhooks,
  MAX_WEBHOOKS_PER_PROJECT,
  toDelivery,
  updateWebhook,
  type DeliveryStatus,
} from '../../db/webhooks.js';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/event-types.js';
import { generateSecret, secretProblem } from '../../webhooks/signing.js';
import { MAX_URL_LENGTH, parseWebhookUrl } from '../../webhooks/webhook-url.js';
import { projectAccess } from '../project-access.js';
import { DEFAULT_LIMIT, MAX_LIMIT } from '../record-list.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, listOf, pageOf, projectParams, ref, uuidSchema } from '../schemas.js';

/**
 * A project's webhook endpoints (docs/webhooks.md). Project admins and owners manage them; every
 * member reads them and their delivery log. The signing secret is in the creation's response and
 * nowhere else: not in lists, audit events or log lines.
 */
interface NewWebhookBody {
  url: string;
  events: string[];
  secret?: string;
}

interface WebhookPatch {
  enabled?: boolean;
  events?: string[];
}

interface DeliveryListQuery {
  limit: number;
  cursor?: string;
  status?: DeliveryStatus;
}

const webhookParams = {
  type: 'object',
  required: ['id', 'webhook_id'],
  additionalProperties: false,
  properties: { id: { ...uuidSchema, description: 'Project id.' }, webhook_id: { ...uuidSchema, description: 'Webhook id.' } },
} as const;

const eventsSchema = {
  type: 'array',
  minItems: 1,
  uniqueItems: true,
  items: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
  description: `Event types to send: ${WEBHOOK_EVENT_TYPES.map((t) => `\`${t}\``).join(', ')}.`,
} as const;

export function registerWebhookRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Params: { id: string }; Body: NewWebhookBody }>(
    '/v1/projects/:id/webhooks',
    {
      config: { auditType: 'webhook.created' },
      schema: {
        tags: ['webhooks'],
        summary: 'Add a webhook endpoint (project admins and owners); the response is the only time its secret is shown',
        description:
          'The URL must be http or https, without credentials, and must not resolve to a private, loopback, link-local or other non-public address (unless WEBHOOK_ALLOW_PRIVATE=true). Without `secret` one is generated.',
        params: projectParams,
        body: {
          type: 'object',
          required: ['url', 'events'],
          additionalProperties: false,
          properties: {
            url: { type: 'string', minLength: 1, maxLength: MAX_URL_LENGTH, description: 'Where events are POSTed.' },
            events: eventsSchema,
            secret: { type: 'string', minLength: 1, maxLength: 200, description: 'A signing secret of your own: `whsec_` + base64 of 24 to 64 bytes.' },
          },
        },
        response: { 201: ref('NewWebhook'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      await projectAccess(ctx.sql, principal, req.params.id, 'webhook.manage', 'manage webhooks');
      const parsed = parseWebhookUrl(req.body.url);
      if (parsed.problem !== null) throw Errors.badBodyField('url', parsed.problem);
      if (req.body.secret !== undefined) {
        const problem = secretProblem(req.body.secret);
        if (problem !== null) throw Errors.badBodyField('secret', problem);
      }
      if (!ctx.config.webhookAllowPrivate) await refusePrivateHost(parsed.url);
      const secret = req.body.secret ?? generateSecret();
      const webhook = await ctx.sql.begin(async (tx) => {
        // A share lock: a project deletion waits for this to commit (like a new key).
        await projectAccess(tx, principal, req.params.id, 'webhook.manage', 'manage webhooks', { lock: 'share' });
        if ((await countWebhooks(tx, req.params.id)) >= MAX_WEBHOOKS_PER_PROJECT) {
          throw Errors.tooManyWebhooks(MAX_WEBHOOKS_PER_PROJECT);
        }
        const created = await insertWebhook(tx, { projectId: req.params.id, url: parsed.url.href, events: req.body.events, secret, createdBy: principal.userId });
        await writeAudit(tx, { type: 'webhook.created', outcome: 'success', status: 201, projectId: created.project_id, actor: principal.userId, target: { type: 'webhook', id: created.id } }, requestFacts(req, reply));
        return created;
      });
      return reply.status(201).send({
        id: webhook.id,
        project_id: webhook.project_id,
        url: webhook.url,
        events: webhook.events,
        secret,
        enabled: webhook.enabled,
        created_at: webhook.created_at,
      });
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/projects/:id/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: "The project's webhook endpoints (never their secrets)",
        params: projectParams,
        response: { 200: listOf('Webhook'), ...ERROR_RESPONSES },
      },
    },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      return { data: await listWebhooks(ctx.sql, req.params.id) };
    },
  );

  app.patch<{ Params: { id: string; webhook_id: string }; Body: WebhookPatch }>(
    '/v1/projects/:id/webhooks/:webhook_id',
    {
      config: { auditType: 'webhook.updated' },
      schema: {
        tags: ['webhooks'],
        summary: 'Enable or disable a webhook, or change its events (project admins and owners)',
        description: 'Disabling ends its pending deliveries; enabling starts its count of failed deliveries afresh (what happened meanwhile is not sent).',
        params: webhookParams,
        body: { type: 'object', minProperties: 1, additionalProperties: false, properties: { enabled: { type: 'boolean' }, events: eventsSchema } },
        response: { 200: ref('Webhook'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const updated = await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'webhook.manage', 'manage webhooks');
        const before = await findWebhook(tx, req.params.id, req.params.webhook_id, { lock: true });
        if (before === null) throw webhookNotFound();
        const webhook = await updateWebhook(tx, req.params.id, req.params.webhook_id, { ...req.body, disabledReason: null });
        if (webhook === null) throw webhookNotFound();
        const facts = requestFacts(req, reply);
        const audit = (type: string) => writeAudit(tx, { type, outcome: 'success', status: 200, projectId: webhook.project_id, actor: principal.userId, target: { type: 'webhook', id: webhook.id } }, facts);
        if (before.enabled && !webhook.enabled) await failPendingDeliveries(tx, webhook.id, 'the webhook was disabled');
        if (before.enabled !== webhook.enabled) await audit(webhook.enabled ? 'webhook.enabled' : 'webhook.disabled');
        if (req.body.events !== undefined) await audit('webhook.updated');
        return webhook;
      });
      return updated;
    },
  );

  app.delete<{ Params: { id: string; webhook_id: string } }>(
    '/v1/projects/:id/webhooks/:webhook_id',
    {
      config: { auditType: 'webhook.deleted' },
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook and its delivery log (project admins and owners)',
        params: webhookParams,
        response: { 204: { type: 'null', description: 'Deleted.' }, ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'webhook.manage', 'manage webhooks');
        if (!(await deleteWebhook(tx, req.params.id, req.params.webhook_id))) throw webhookNotFound();
        await writeAudit(tx, { type: 'webhook.deleted', outcome: 'success', status: 204, projectId: req.params.id, actor: principal.userId, target: { type: 'webhook', id: req.params.webhook_id } }, requestFacts(req, reply));
      });
      return reply.status(204).send();
    },
  );

  app.get<{ Params: { id: string; webhook_id: string }; Querystring: DeliveryListQuery }>(
    '/v1/projects/:id/webhooks/:webhook_id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: "A webhook's delivery log, newest first",
        description: 'Keyset-paged like the record lists: follow `next_cursor` while `has_more`.',
        params: webhookParams,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'Deliveries per page.' },
            cursor: { type: 'string', minLength: 1, maxLength: 512, description: '`next_cursor` of the previous page.' },
            status: { type: 'string', enum: ['pending', 'delivered', 'failed'], description: 'Only deliveries in this state.' },
          },
        },
        response: { 200: pageOf('WebhookDelivery'), ...ERROR_RESPONSES },
      },
    },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      if ((await findWebhook(ctx.sql, req.params.id, req.params.webhook_id)) === null) throw webhookNotFound();
      const { limit, cursor, status } = req.query;
      const before = cursor === undefined ? null : ctx.cursors.decode(cursor, 'webhook-deliveries', 'desc');
      const rows = await listDeliveries(ctx.sql, { webhookId: req.params.webhook_id, status, fetch: limit + 1, before });
      const hasMore = rows.length > limit;
      const page = hasMore ? rows.slice(0, limit) : rows;
      const last = page[page.length - 1];
      return {
        data: page.map(toDelivery),
        next_cursor: hasMore && last !== undefined ? ctx.cursors.encode('webhook-deliveries', 'desc', { ts: last.created_at.getTime(), id: last.id }) : null,
        has_more: hasMore,
      };
    },
  );
}

/** The creation's address rule; a name that does not resolve yet is checked at each delivery instead. */
async function refusePrivateHost(url: URL): Promise<void> {
  try {
    await checkHostAtCreation(bareHost(url));
  } catch (err) {
    if (err instanceof AddressNotAllowed) {
      throw Errors.webhookHostNotPublic();
    }
    throw Errors.webhookHostUnresolved();
  }
}

function webhookNotFound(): GatewayError {
  return Errors.noSuchWebhook();
}
