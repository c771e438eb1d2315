import type { Api } from './api.js';
import type { ApiKey, List, Member, Page, Project, User } from '@gateway/shared';
import { ApiError } from './cli-errors.js';

/**
 * Operators name things the way they know them: a project by its name, a key by its name or
 * prefix, an account by its email. An id is always accepted too and is what the API is sent.
 * A name that matches nothing, or several things, is an error that asks for the id.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isId = (text: string): boolean => UUID.test(text);

export async function projectIdOf(api: Api, ref: string): Promise<string> {
  if (isId(ref)) return ref;
  const { data } = await api.get<List<Project>>('/v1/projects');
  return one(data.filter((p) => p.name === ref.trim()), `project named "${ref}"`).id;
}

export async function projectOf(api: Api, ref: string): Promise<Project> {
  return api.get<Project>(`/v1/projects/${await projectIdOf(api, ref)}`);
}

export async function keyOf(api: Api, projectId: string, ref: string): Promise<ApiKey> {
  const { data } = await api.get<List<ApiKey>>(`/v1/projects/${projectId}/keys`);
  const matches = isId(ref) ? data.filter((k) => k.id === ref.toLowerCase()) : data.filter((k) => k.name === ref.trim() || k.prefix === ref.trim());
  return one(matches, `key "${ref}" in this project`);
}

/** A project member by user id or email (any case). */
export async function memberOf(api: Api, projectId: string, ref: string): Promise<Member> {
  const { data } = await api.get<List<Member>>(`/v1/projects/${projectId}/members`);
  const wanted = ref.trim().toLowerCase();
  return one(data.filter((m) => m.user_id === wanted || m.email.toLowerCase() === wanted), `member "${ref}" in this project`);
}

/** An account by id or exact email, any case (account admins). */
export async function userIdOf(api: Api, ref: string): Promise<string> {
  if (isId(ref)) return ref;
  const wanted = ref.trim().toLowerCase();
  const { data } = await api.get<Page<User>>('/v1/users', { email: wanted, limit: 1000 });
  return one(data.filter((u) => u.email.toLowerCase() === wanted), `account with the email "${ref}"`).id;
}

function one<T>(matches: T[], what: string): T {
  if (matches.length === 0) throw new ApiError(`No ${what}. (NOT_FOUND)`, 'NOT_FOUND', null);
  if (matches.length > 1) throw new ApiError(`More than one ${what}; use its id. (CONFLICT)`, 'CONFLICT', null);
  return matches[0] as T;
}
