import type { FastifyInstance } from 'fastify';
import { Errors, isTimezone, type GatewayError, type BudgetInput } from '@gateway/shared';
import { principalOf } from '../../auth/require-auth.js';
import { budgetProjectionFailed, projectBudgets, resetLedger } from '../../budgets/budget-projection.js';
import { budgetStatus } from '../../budgets/budget-status.js';
import type { AppContext } from '../../context.js';
import { writeAudit } from '../../db/audit-writer.js';
import { countBudgets, deleteBudget, findBudget, insertBudget, listBudgets, MAX_BUDGETS_PER_PROJECT, updateBudget, type BudgetFields, type BudgetRow } from '../../db/budgets.js';
import type { Queryable } from '../../db/connect.js';
import { findKey } from '../../db/keys.js';
import { budgetBodyProperties, budgetParams } from '../budget-schemas.js';
import { projectAccess } from '../project-access.js';
import { requestFacts } from '../request-facts.js';
import { ERROR_RESPONSES, listOf, projectParams, ref } from '../schemas.js';

/**
 * A project's spending budgets (docs/budgets.md). Changing them is a project setting (project
 * admins and owners, like the quota); every member reads them. Each change is committed, audited,
 * then projected to Redis and announced, so every proxy enforces it within moments.
 */
export function registerBudgetRoutes(app: FastifyInstance, ctx: AppContext): void {
  app.post<{ Params: { id: string }; Body: BudgetInput }>(
    '/v1/projects/:id/budgets',
    {
      config: { auditType: 'budget.created' },
      schema: {
        tags: ['budgets'],
        summary: 'Add a spending budget (project admins and owners); enforced by every proxy within seconds',
        params: projectParams,
        body: { type: 'object', required: ['scope', 'limit_usd', 'period'], additionalProperties: false, properties: budgetBodyProperties },
        response: { 201: ref('Budget'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const fields = fieldsOf(req.body);
      const row = await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'project.update', 'change this project', { lock: 'share' });
        await checkFields(tx, req.params.id, fields);
        if ((await countBudgets(tx, req.params.id)) >= MAX_BUDGETS_PER_PROJECT) {
          throw Errors.tooManyBudgets(MAX_BUDGETS_PER_PROJECT);
        }
        const created = await insertBudget(tx, req.params.id, fields, principal.userId);
        await writeAudit(tx, { type: 'budget.created', outcome: 'success', status: 201, projectId: created.project_id, actor: principal.userId, target: { type: 'budget', id: created.id } }, requestFacts(req, reply));
        return created;
      });
      if (!(await projectBudgets(ctx, row.project_id))) budgetProjectionFailed(req.log, row.project_id);
      return reply.status(201).send(await budgetStatus(ctx, row));
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/projects/:id/budgets',
    { schema: { tags: ['budgets'], summary: "The project's budgets, with their current spend", params: projectParams, response: { 200: listOf('Budget'), ...ERROR_RESPONSES } } },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      const rows = await listBudgets(ctx.sql, req.params.id);
      return { data: await Promise.all(rows.map((row) => budgetStatus(ctx, row))) };
    },
  );

  app.get<{ Params: { id: string; budget_id: string } }>(
    '/v1/projects/:id/budgets/:budget_id',
    { schema: { tags: ['budgets'], summary: 'One budget, with its current spend', params: budgetParams, response: { 200: ref('Budget'), ...ERROR_RESPONSES } } },
    async (req) => {
      await projectAccess(ctx.sql, principalOf(req), req.params.id, 'project.read', 'read this project');
      const row = await findBudget(ctx.sql, req.params.id, req.params.budget_id);
      if (row === null) throw budgetNotFound();
      return budgetStatus(ctx, row);
    },
  );

  app.patch<{ Params: { id: string; budget_id: string }; Body: Partial<BudgetInput> }>(
    '/v1/projects/:id/budgets/:budget_id',
    {
      config: { auditType: 'budget.updated' },
      schema: {
        tags: ['budgets'],
        summary: 'Change a budget (project admins and owners); a new scope or period starts its spend again from the usage records',
        params: budgetParams,
        body: { type: 'object', minProperties: 1, additionalProperties: false, properties: budgetBodyProperties },
        response: { 200: ref('Budget'), ...ERROR_RESPONSES },
      },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      const { before, after } = await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'project.update', 'change this project', { lock: 'share' });
        const found = await findBudget(tx, req.params.id, req.params.budget_id, { lock: true });
        if (found === null) throw budgetNotFound();
        const fields = mergedFields(found, req.body);
        await checkFields(tx, req.params.id, fields);
        const updated = await updateBudget(tx, req.params.id, req.params.budget_id, fields);
        if (updated === null) throw budgetNotFound();
        await writeAudit(tx, { type: 'budget.updated', outcome: 'success', status: 200, projectId: updated.project_id, actor: principal.userId, target: { type: 'budget', id: updated.id } }, requestFacts(req, reply));
        return { before: found, after: updated };
      });
      // What the ledger counts changed: its spend is started again from the usage records.
      if (before.scope !== after.scope || before.key_id !== after.key_id || before.tag !== after.tag || before.period !== after.period || before.timezone !== after.timezone) {
        await resetLedger(ctx, before).catch(() => {});
      }
      if (!(await projectBudgets(ctx, after.project_id))) budgetProjectionFailed(req.log, after.project_id);
      return budgetStatus(ctx, after);
    },
  );

  app.delete<{ Params: { id: string; budget_id: string } }>(
    '/v1/projects/:id/budgets/:budget_id',
    {
      config: { auditType: 'budget.deleted' },
      schema: { tags: ['budgets'], summary: 'Delete a budget (project admins and owners)', params: budgetParams, response: { 204: { type: 'null', description: 'Deleted.' }, ...ERROR_RESPONSES } },
    },
    async (req, reply) => {
      const principal = principalOf(req);
      let gone: BudgetRow | null = null;
      await ctx.sql.begin(async (tx) => {
        await projectAccess(tx, principal, req.params.id, 'project.update', 'change this project', { lock: 'share' });
        gone = await findBudget(tx, req.params.id, req.params.budget_id);
        if (!(await deleteBudget(tx, req.params.id, req.params.budget_id))) throw budgetNotFound();
        await writeAudit(tx, { type: 'budget.deleted', outcome: 'success', status: 204, projectId: req.params.id, actor: principal.userId, target: { type: 'budget', id: req.params.budget_id } }, requestFacts(req, reply));
      });
      if (!(await projectBudgets(ctx, req.params.id))) budgetProjectionFailed(req.log, req.params.id);
      // Its current ledger goes too (older periods' expire by themselves).
      if (gone !== null) await resetLedger(ctx, gone).catch(() => {});
      return reply.status(204).send();
    },
  );
}

function fieldsOf(body: Partial<BudgetInput>): BudgetFields {
  return {
    scope: body.scope ?? 'project',
    key_id: body.key_id ?? null,
    tag: body.tag ?? null,
    limit_usd: body.limit_usd ?? 0,
    period: body.period ?? 'total',
    timezone: body.timezone ?? 'UTC',
    alert_at: [...(body.alert_at ?? [])].sort((a, b) => a - b),
  };
}

/** A PATCH: the fields sent replace the stored ones; a scope change drops the other scope's target. */
function mergedFields(row: BudgetRow, body: Partial<BudgetInput>): BudgetFields {
  const scope = body.scope ?? row.scope;
  return {
    scope,
    key_id: scope === 'key' ? (body.key_id ?? row.key_id) : (body.key_id ?? null),
    tag: scope === 'tag' ? (body.tag ?? row.tag) : (body.tag ?? null),
    limit_usd: body.limit_usd ?? row.limit_usd,
    period: body.period ?? row.period,
    timezone: body.timezone ?? row.timezone,
    alert_at: body.alert_at === undefined ? row.alert_at : [...body.alert_at].sort((a, b) => a - b),
  };
}

/** What JSON schema cannot say: the scope's own target, a real time zone, a key of this project. */
async function checkFields(sql: Queryable, projectId: string, fields: BudgetFields): Promise<void> {
  const bad = (param: string, message: string) => Errors.invalidField(param, message);
  if (fields.scope === 'key' && fields.key_id === null) throw bad('key_id', 'body.key_id is required when scope is key');
  if (fields.scope !== 'key' && fields.key_id !== null) throw bad('key_id', 'body.key_id is only for scope key');
  if (fields.scope === 'tag' && fields.tag === null) throw bad('tag', 'body.tag is required when scope is tag');
  if (fields.scope !== 'tag' && fields.tag !== null) throw bad('tag', 'body.tag is only for scope tag');
  if (!isTimezone(fields.timezone)) throw bad('timezone', `body.timezone must be an IANA time zone such as Europe/Paris; ${JSON.stringify(fields.timezone)} is not one`);
  if (fields.key_id !== null) {
    const key = await findKey(sql, projectId, fields.key_id);
    if (key === null || key.deleted_at !== null) throw bad('key_id', 'body.key_id must name a live key of this project');
  }
}

function budgetNotFound(): GatewayError {
  return Errors.noSuchBudget();
}
