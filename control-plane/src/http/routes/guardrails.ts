import type { FastifyInstance } from 'fastify';
import { AddressNotAllowed, Errors, appliesTo, bareHost, checkHostAtCreation, type Guardrail, type WebhookGuardrail } from '@gateway/shared';
import { checkGuardrails, localDetector, Masker, type Span } from '@gateway/shared/guardrails';
import { principalOf } from '../../auth/require-auth.js';
import { purgeProjectCache } from '../../cache/purge-cache.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { guardrailsOf, replaceGuardrails } from '../../db/guardrails.js';
import { generateSecret, secretProblem } from '../../webhooks/signing.js';
import { projectAccess } from '../project-access.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, projectParams } from '../schemas.js';

/**
 * A project's guardrails (docs/guardrails.md): the ordered list, replaced as a whole. The list is
 * checked here in full (RE2 compiles every pattern) so the proxies trust it; a refusal is 400
 * naming the guardrail. A webhook guard's secret is generated when none is given (or kept from the
 * guardrail of the same id) and shown once, in the PUT's answer; GET never shows it.
 */
const listBody = { type: 'array', maxItems: 50, items: { type: 'object' }, description: 'Guardrails, in the order they run.' } as const;

const guardrailItem = { type: 'object', additionalProperties: true, description: 'A guardrail (docs/guardrails.md); a webhook guard shows `secret_set` instead of its secret, except in the PUT that generated it.' } as const;
const listAnswer = { 200: { type: 'object', required: ['data'], properties: { data: { type: 'array', items: guardrailItem } } }, ...ERROR_RESPONSES } as const;
const testAnswer = {
  200: {
    type: 'object',
    required: ['stage', 'blocked_by', 'text', 'guardrails'],
    properties: {
      stage: { type: 'string', enum: ['input', 'output'] },
      blocked_by: { type: ['string', 'null'], description: 'The guardrail that blocked the text, if one did.' },
      text: { type: ['string', 'null'], description: 'The text after masks (null when blocked).' },
      guardrails: { type: 'array', items: { type: 'object', additionalProperties: true } },
    },
  },
  ...ERROR_RESPONSES,
} as const;

function hideSecrets(list: readonly Guardrail[]): unknown[] {
  return list.map((g) => (g.type === 'webhook' ? { ...g, secret: undefined, secret_set: true } : g));
}

export function registerGuardrailRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.get<{ Params: { id: string } }>(
    '/v1/projects/:id/guardrails',
    { schema: { tags: ['projects'], summary: "The project's guardrails (webhook secrets left out)", params: projectParams, response: listAnswer } },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      return { data: hideSecrets(await guardrailsOf(ctx.sql, req.params.id)) };
    },
  );

  app.put<{ Params: { id: string }; Body: unknown[] }>(
    '/v1/projects/:id/guardrails',
    {
      config: { auditType: 'project.updated' },
      schema: { tags: ['projects'], summary: "Replace the project's guardrails (project admins and owners); takes effect within seconds", params: projectParams, body: listBody, response: listAnswer },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const checked = checkGuardrails(req.body);
      if (!('guardrails' in checked)) throw Errors.invalidField(checked.guardrail, checked.message);
      // The proxies call webhook guards: the webhooks' address rule applies (WEBHOOK_ALLOW_PRIVATE).
      if (!ctx.config.webhookAllowPrivate) for (const g of checked.guardrails) if (g.type === 'webhook') await refusePrivateHost(g.id, g.url);
      const shown = new Map<string, string>();
      const saved = await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'project.update', 'change this project', { lock: 'update' });
        const before = new Map((await guardrailsOf(tx, req.params.id)).map((g) => [g.id, g]));
        const list = checked.guardrails.map((g) => {
          if (g.type !== 'webhook') return g;
          if (g.secret !== '') {
            const problem = secretProblem(g.secret);
            if (problem !== null) throw Errors.invalidField(g.id, `guardrail ${g.id}: secret ${problem}`);
            return g;
          }
          const kept = before.get(g.id);
          if (kept?.type === 'webhook' && kept.secret !== '') return { ...g, secret: kept.secret } satisfies WebhookGuardrail;
          const secret = generateSecret();
          shown.set(g.id, secret);
          return { ...g, secret } satisfies WebhookGuardrail;
        });
        await replaceGuardrails(tx, req.params.id, list);
        await writeAudit(tx, { type: 'project.updated', outcome: 'success', status: 200, projectId: req.params.id, actor: principal.userId, target: { type: 'project', id: req.params.id } }, requestFacts(req, reply));
        return list;
      });
      // Cached answers were checked (or not) by the old list: they go before the new list is
      // announced, whose project.updated makes every proxy drop its in-memory copies too.
      // (Not waited for while Redis is away: its commands would queue until it returns.)
      const purged = ctx.redis.status === 'ready' ? await purgeProjectCache(ctx.redis, ctx.keys, req.params.id).then(() => true, () => false) : false;
      if (!purged) req.log.warn({ project_id: req.params.id }, 'cached answers not purged after a guardrail change; they expire by their TTL');
      if (!(await ctx.projection.tryPutGuardrails(req.params.id, saved))) req.log.warn({ project_id: req.params.id }, 'guardrails changed while Redis is unreachable; the change reaches the proxies at the next rebuild');
      // Secrets generated now are shown this once; given or kept ones never again.
      return { data: saved.map((g) => (g.type === 'webhook' ? (shown.has(g.id) ? { ...g, secret: shown.get(g.id) } : hideSecrets([g])[0]) : g)) };
    },
  );

  app.post<{ Params: { id: string }; Body: { text: string; stage?: 'input' | 'output'; guardrails?: unknown[] } }>(
    '/v1/projects/:id/guardrails/test',
    {
      schema: {
        tags: ['projects'],
        summary: 'Run the saved (or the posted) guardrails on a text; webhook and moderation guards are not called',
        params: projectParams,
        body: {
          type: 'object',
          required: ['text'],
          additionalProperties: false,
          properties: { text: { type: 'string', maxLength: 1_000_000 }, stage: { type: 'string', enum: ['input', 'output'] }, guardrails: listBody },
        },
        response: testAnswer,
      },
    },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      let list: Guardrail[];
      if (req.body.guardrails === undefined) list = await guardrailsOf(ctx.sql, req.params.id);
      else {
        const checked = checkGuardrails(req.body.guardrails);
        if (!('guardrails' in checked)) throw Errors.invalidField(checked.guardrail, checked.message);
        list = checked.guardrails;
      }
      const stage = req.body.stage ?? 'input';
      const masker = new Masker();
      let text = req.body.text;
      let blockedBy: string | null = null;
      const results = [];
      for (const g of list) {
        if (!appliesTo(g, stage)) continue;
        const detect = localDetector(g);
        if (detect === null) {
          results.push({ id: g.id, type: g.type, action: g.action, run: false, matches: [] });
          continue;
        }
        const spans: Span[] = detect(text);
        results.push({ id: g.id, type: g.type, action: g.action, run: true, matches: spans.map((s) => ({ kind: s.kind, text: text.slice(s.start, s.end) })) });
        if (spans.length === 0) continue;
        if (g.action === 'block') {
          blockedBy = g.id;
          break;
        }
        if (g.action === 'mask') text = masker.apply(text, spans);
      }
      return { stage, blocked_by: blockedBy, text: blockedBy === null ? text : null, guardrails: results };
    },
  );
}

async function refusePrivateHost(id: string, url: string): Promise<void> {
  try {
    await checkHostAtCreation(bareHost(new URL(url)));
  } catch (err) {
    if (err instanceof AddressNotAllowed) throw Errors.invalidField(id, `guardrail ${id}: url must reach a public address (its host is or resolves to a private, loopback, link-local or other non-public address)`);
    throw Errors.invalidField(id, `guardrail ${id}: the url's host could not be resolved`);
  }
}
