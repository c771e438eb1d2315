import { randomBytes } from 'node:crypto';
import { generateApiKey, NO_RATE_LIMITS } from '@gateway/shared';
import { hashPassword } from './auth/passwords.js';
import { one, type Db } from './db/connect.js';
import type { KeyProjection } from './keys/projection.js';

/**
 * First-start seeding: an admin account and a demo project with one key, so `npm start` on an
 * empty database leads straight to a working curl line. Each step runs at most once per
 * database, even with several control planes starting together.
 */
export interface SeedResult {
  admin: { email: string; created: boolean; generatedPassword: string | null } | null;
  demo: { projectId: string; keyId: string; key: string } | null;
}

export interface SeedOptions {
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  seedDemo: boolean;
}

export const DEFAULT_ADMIN_EMAIL = 'admin@localhost';
const DEMO_QUOTA = 1_000_000;

export async function seed(sql: Db, projection: KeyProjection, options: SeedOptions): Promise<SeedResult> {
  const admin = await seedAdmin(sql, options);
  const demo = options.seedDemo ? await seedDemo(sql, projection, admin?.id ?? null) : null;
  return {
    admin: admin && { email: admin.email, created: admin.created, generatedPassword: admin.generatedPassword },
    demo,
  };
}

async function seedAdmin(sql: Db, options: SeedOptions) {
  let email = options.adminEmail;
  let password = options.adminPassword;
  let generatedPassword: string | null = null;
  if (email === undefined || password === undefined) {
    // Without configured credentials an admin is made only on a database with no users at all,
    // with a generated password shown once.
    const { count } = one(await sql<{ count: number }[]>`select count(*)::int as count from users`);
    if (count > 0) return null;
    email ??= DEFAULT_ADMIN_EMAIL;
    if (password === undefined) {
      password = randomBytes(12).toString('base64url');
      generatedPassword = password;
    }
  }
  const existing = await sql<{ id: string }[]>`select id from users where lower(email) = lower(${email})`;
  if (existing[0]) return { id: existing[0].id, email, created: false, generatedPassword: null };
  const hash = await hashPassword(password);
  const inserted = await sql<{ id: string }[]>`
    insert into users (email, password_hash, role) values (${email}, ${hash}, 'admin')
    on conflict do nothing returning id`;
  if (inserted[0]) return { id: inserted[0].id, email, created: true, generatedPassword };
  const again = await sql<{ id: string }[]>`select id from users where lower(email) = lower(${email})`;
  return again[0] ? { id: again[0].id, email, created: false, generatedPassword: null } : null;
}

async function seedDemo(sql: Db, projection: KeyProjection, ownerId: string | null) {
  const generated = generateApiKey();
  const result = await sql.begin(async (tx) => {
    const claimed = await tx`insert into gateway_meta (key, value) values ('demo_seeded_at', now()::text) on conflict do nothing returning key`;
    if (claimed.length === 0) return null;
    const hasProjects = await tx`select 1 from projects limit 1`;
    if (hasProjects.length > 0) return null;
    const project = one(await tx<{ id: string }[]>`insert into projects (name, quota_tokens) values ('Demo', ${DEMO_QUOTA}) returning id`);
    if (ownerId !== null) await tx`insert into project_members (project_id, user_id, role) values (${project.id}, ${ownerId}, 'owner')`;
    const key = one(await tx<{ id: string }[]>`
      insert into api_keys (project_id, name, prefix, key_hash, created_by)
      values (${project.id}, 'demo key', ${generated.prefix}, ${generated.hash}, ${ownerId}) returning id`);
    return { projectId: project.id, keyId: key.id };
  });
  if (result === null) return null;
  await projection.putPolicy({
    id: result.projectId,
    quota_tokens: DEMO_QUOTA,
    quota_period: 'total',
    rate_limits: NO_RATE_LIMITS,
    allowed_models: null,
    max_tokens_cap: null,
  });
  await projection.put({ id: result.keyId, project_id: result.projectId, key_hash: generated.hash, expires_at: null });
  return { ...result, key: generated.key };
}
