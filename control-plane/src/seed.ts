import { ConfigError, generateApiKey, NO_RATE_LIMITS, type ControlPlaneConfig } from '@gateway/shared';
import { passwordProblem, generatePassword } from './auth/password-policy.js';
import { hashPassword } from './auth/passwords.js';
import { one, type Db } from './db/connect.js';
import type { KeyProjection } from './keys/projection.js';
import { PasswordFile } from './password-file.js';

/**
 * First-start seeding: an admin account and a demo project with one key, so `npm start` on an
 * empty database leads straight to a working curl line. Each step runs at most once per
 * database, even with several control planes starting together.
 *
 * In production (NODE_ENV=production) no demo is made unless DEMO_SEED=true, and a generated
 * admin password goes to ADMIN_PASSWORD_FILE (mode 0600) instead of the console, where log
 * collectors would keep it.
 */
export interface SeedResult {
  admin: {
    email: string;
    created: boolean;
    /** Shown once on the console (development only). */
    generatedPassword: string | null;
    /** Where the generated password was written instead (production). */
    passwordFile: string | null;
  } | null;
  demo: { projectId: string; keyId: string; key: string } | null;
}

export interface SeedOptions {
  adminEmail: string | undefined;
  adminPassword: string | undefined;
  seedDemo: boolean;
  /** Set in production: a generated admin password is written here rather than shown. */
  adminPasswordFile?: string | undefined;
}

export const DEFAULT_ADMIN_EMAIL = 'admin@localhost';
const DEMO_QUOTA = 1_000_000;

/**
 * The seeding the configuration asks for, checked before anything is connected: an
 * ADMIN_PASSWORD the password policy refuses stops the start with a ConfigError.
 */
export function seedOptionsFrom(config: ControlPlaneConfig): SeedOptions {
  if (config.adminPassword !== undefined) {
    const problem = passwordProblem(config.adminPassword, config.adminEmail ?? DEFAULT_ADMIN_EMAIL);
    if (problem !== null) throw new ConfigError(`ADMIN_PASSWORD ${problem} (password policy: see docs/accounts.md)`);
  }
  return {
    adminEmail: config.adminEmail,
    adminPassword: config.adminPassword,
    seedDemo: config.seedDemo,
    adminPasswordFile: config.production ? config.adminPasswordFile : undefined,
  };
}

export async function seed(sql: Db, projection: KeyProjection, options: SeedOptions): Promise<SeedResult> {
  const admin = await seedAdmin(sql, options);
  const demo = options.seedDemo ? await seedDemo(sql, projection, admin?.id ?? null) : null;
  return {
    admin: admin && { email: admin.email, created: admin.created, generatedPassword: admin.generatedPassword, passwordFile: admin.passwordFile },
    demo,
  };
}

async function seedAdmin(sql: Db, options: SeedOptions) {
  let email = options.adminEmail;
  let password = options.adminPassword;
  let generated = false;
  if (email === undefined || password === undefined) {
    // Without configured credentials an admin is made only on a database with no users at all,
    // with a generated password shown once.
    const { count } = one(await sql<{ count: number }[]>`select count(*)::int as count from users`);
    if (count > 0) return null;
    email ??= DEFAULT_ADMIN_EMAIL;
    if (password === undefined) {
      password = generatePassword();
      generated = true;
    }
  }
  const notCreated = (id: string) => ({ id, email, created: false, generatedPassword: null, passwordFile: null });
  const existing = await sql<{ id: string }[]>`select id from users where lower(email) = lower(${email})`;
  if (existing[0]) return notCreated(existing[0].id);
  // Written (beside its final name) before the account exists: should the file fail, no admin is
  // left behind whose password nobody saw.
  const file = generated && options.adminPasswordFile !== undefined ? await PasswordFile.stage(options.adminPasswordFile, password) : null;
  const hash = await hashPassword(password);
  const inserted = await sql<{ id: string }[]>`
    insert into users (email, password_hash, role) values (${email}, ${hash}, 'admin')
    on conflict do nothing returning id`;
  if (inserted[0]) {
    const passwordFile = file === null ? null : await file.publish();
    return { id: inserted[0].id, email, created: true, generatedPassword: generated && file === null ? password : null, passwordFile };
  }
  await file?.discard();
  const again = await sql<{ id: string }[]>`select id from users where lower(email) = lower(${email})`;
  return again[0] ? notCreated(again[0].id) : null;
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
