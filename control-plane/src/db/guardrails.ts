import type { Guardrail } from '@gateway/shared';
import type { JSONValue } from 'postgres';
import type { Queryable } from './connect.js';

/** A project's guardrails ([] when it has none). */
export async function guardrailsOf(sql: Queryable, projectId: string): Promise<Guardrail[]> {
  const rows = await sql<{ guardrails: Guardrail[] }[]>`select guardrails from project_guardrails where project_id = ${projectId}`;
  return rows[0]?.guardrails ?? [];
}

/** Replaces the list; an empty list removes the row. */
export async function replaceGuardrails(sql: Queryable, projectId: string, guardrails: readonly Guardrail[]): Promise<void> {
  if (guardrails.length === 0) {
    await sql`delete from project_guardrails where project_id = ${projectId}`;
    return;
  }
  // postgres.js serialises it as jsonb itself (a JSON text parameter would be stored as a string).
  const value = sql.json(guardrails as unknown as JSONValue);
  await sql`
    insert into project_guardrails (project_id, guardrails) values (${projectId}, ${value})
    on conflict (project_id) do update set guardrails = excluded.guardrails, updated_at = now()`;
}

/** Every live project's guardrails (the projection rebuild). */
export async function allGuardrails(sql: Queryable): Promise<Map<string, Guardrail[]>> {
  const rows = await sql<{ project_id: string; guardrails: Guardrail[] }[]>`
    select g.project_id, g.guardrails from project_guardrails g join projects p on p.id = g.project_id where p.deleted_at is null`;
  return new Map(rows.map((row) => [row.project_id, row.guardrails]));
}
