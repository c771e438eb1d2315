import type { Project, RateLimits } from '../api/types.js';
import { mcpText, parseMcpText, sameMcp } from './mcp-setting-text.js';
import { aliasesText, parseAliasesText, sameAliases } from './model-aliases-text.js';

/**
 * The project settings form: every field PATCH /v1/projects/{id} takes, as text while edited,
 * and the patch that sends only what changed (so two people editing different settings do not
 * undo each other). An empty number field means "no limit", as null does in the API.
 */
export interface SettingsForm {
  name: string;
  quota: string;
  period: 'total' | 'month';
  key_rpm: string;
  key_tpm: string;
  project_rpm: string;
  project_tpm: string;
  max_tokens_cap: string;
  modelsMode: 'all' | 'some';
  models: string[];
  /** The MCP setting as text (mcp-setting-text.ts). */
  mcp: string;
  /** The response cache (docs/caching.md): its mode and, as text, how long an answer is served. */
  cacheMode: 'off' | 'exact';
  cacheTtl: string;
  /** Model aliases as text (model-aliases-text.ts). */
  aliases: string;
  /** A parameter a translation cannot carry: dropped and named, or the request refused. */
  unsupportedParams: 'drop' | 'refuse';
  /** Days the Responses API state is kept, as text. */
  responsesTtl: string;
}

export type SettingsField = Exclude<keyof SettingsForm, 'modelsMode' | 'cacheMode' | 'unsupportedParams'>;
export type SettingsProblems = Partial<Record<SettingsField, string>>;

export const LIMIT_FIELDS = ['key_rpm', 'key_tpm', 'project_rpm', 'project_tpm'] as const;
const INT32_MAX = 2_147_483_647;

const text = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

export function formFromProject(p: Project): SettingsForm {
  const limits = p.rate_limits;
  return {
    name: p.name,
    quota: text(p.quota_tokens),
    period: p.quota_period ?? 'total',
    key_rpm: text(limits?.key_rpm),
    key_tpm: text(limits?.key_tpm),
    project_rpm: text(limits?.project_rpm),
    project_tpm: text(limits?.project_tpm),
    max_tokens_cap: text(p.max_tokens_cap),
    modelsMode: p.allowed_models === null || p.allowed_models === undefined ? 'all' : 'some',
    models: p.allowed_models ?? [],
    mcp: mcpText(p.mcp),
    cacheMode: p.cache?.mode ?? 'off',
    cacheTtl: String(p.cache?.ttl_seconds ?? DEFAULT_CACHE_TTL),
    aliases: aliasesText(p.model_aliases),
    unsupportedParams: p.unsupported_params ?? 'drop',
    responsesTtl: String(p.responses?.ttl_days ?? DEFAULT_RESPONSES_TTL_DAYS),
  };
}

const DEFAULT_RESPONSES_TTL_DAYS = 30;
const MAX_RESPONSES_TTL_DAYS = 3650;

const DEFAULT_CACHE_TTL = 3600;
const MAX_CACHE_TTL = 30 * 24 * 3600;

/** A whole number in [min, max], separators people type (1,000 or 1 000 or 1_000) allowed; empty is null. */
export function parseWhole(value: string, min: number, max: number): { ok: true; value: number | null } | { ok: false; problem: string } {
  const cleaned = value.trim().replace(/[\s,_]/g, '');
  if (cleaned === '') return { ok: true, value: null };
  if (!/^\d+$/.test(cleaned)) return { ok: false, problem: 'Enter a whole number, or leave it empty for no limit.' };
  const n = Number(cleaned);
  if (n < min) return { ok: false, problem: `Enter ${min} or more, or leave it empty for no limit.` };
  if (!Number.isSafeInteger(n) || n > max) return { ok: false, problem: `Enter at most ${max.toLocaleString('en-US')}.` };
  return { ok: true, value: n };
}

export interface SettingsPatch {
  patch: Record<string, unknown>;
  /** The quota goes from a number to none: the project becomes unlimited (asked about first). */
  clearsQuota: boolean;
}

export function settingsPatch(p: Project, form: SettingsForm): { ok: true; value: SettingsPatch } | { ok: false; problems: SettingsProblems } {
  const problems: SettingsProblems = {};
  const patch: Record<string, unknown> = {};

  const name = form.name.trim();
  if (name === '') problems.name = 'Enter a name.';
  else if (name.length > 100) problems.name = 'Use at most 100 characters.';
  else if (name !== p.name) patch.name = name;

  const quota = parseWhole(form.quota, 0, Number.MAX_SAFE_INTEGER);
  if (!quota.ok) problems.quota = quota.problem.replace('no limit', 'no quota');
  else if (quota.value !== p.quota_tokens) patch.quota_tokens = quota.value;
  if (form.period !== (p.quota_period ?? 'total')) patch.quota_period = form.period;

  const limits: Partial<RateLimits> = {};
  for (const field of LIMIT_FIELDS) {
    const parsed = parseWhole(form[field], 0, INT32_MAX);
    if (!parsed.ok) problems[field] = parsed.problem;
    else if (parsed.value !== (p.rate_limits?.[field] ?? null)) limits[field] = parsed.value;
  }
  if (Object.keys(limits).length > 0) patch.rate_limits = limits;

  const cap = parseWhole(form.max_tokens_cap, 1, INT32_MAX);
  if (!cap.ok) problems.max_tokens_cap = cap.problem;
  else if (cap.value !== (p.max_tokens_cap ?? null)) patch.max_tokens_cap = cap.value;

  const models = form.modelsMode === 'all' ? null : [...new Set(form.models)];
  if (!sameModels(models, p.allowed_models ?? null)) patch.allowed_models = models;

  const mcp = parseMcpText(form.mcp);
  if (!mcp.ok) problems.mcp = mcp.problem;
  else if (!sameMcp(mcp.value, p.mcp)) patch.mcp = mcp.value;

  // The API replaces the setting whole: both parts are sent when either changed.
  const ttl = parseWhole(form.cacheTtl, 1, MAX_CACHE_TTL);
  if (!ttl.ok || ttl.value === null) problems.cacheTtl = ttl.ok ? 'Enter how many seconds an answer is served.' : ttl.problem.replace(', or leave it empty for no limit', '');
  else if (form.cacheMode !== (p.cache?.mode ?? 'off') || ttl.value !== (p.cache?.ttl_seconds ?? DEFAULT_CACHE_TTL)) patch.cache = { mode: form.cacheMode, ttl_seconds: ttl.value };

  const aliases = parseAliasesText(form.aliases);
  if (!aliases.ok) problems.aliases = aliases.problem;
  else if (!sameAliases(aliases.value, p.model_aliases)) patch.model_aliases = aliases.value;

  if (form.unsupportedParams !== (p.unsupported_params ?? 'drop')) patch.unsupported_params = form.unsupportedParams;

  const days = parseWhole(form.responsesTtl, 1, MAX_RESPONSES_TTL_DAYS);
  if (!days.ok || days.value === null) problems.responsesTtl = days.ok ? 'Enter how many days a stored response is kept.' : days.problem.replace(', or leave it empty for no limit', '');
  else if (days.value !== (p.responses?.ttl_days ?? DEFAULT_RESPONSES_TTL_DAYS)) patch.responses = { ttl_days: days.value };

  if (Object.keys(problems).length > 0) return { ok: false, problems };
  return { ok: true, value: { patch, clearsQuota: p.quota_tokens !== null && quota.ok && quota.value === null } };
}

function sameModels(a: string[] | null, b: string[] | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  const set = new Set(b);
  return a.every((m) => set.has(m));
}

/** Which form field an API refusal names (`param`: "quota_tokens", "rate_limits.key_rpm", …). */
export function fieldOfParam(param: string | null): SettingsField | null {
  if (param === null) return null;
  const last = param.split('.').pop() ?? '';
  const map: Record<string, SettingsField> = {
    name: 'name',
    quota_tokens: 'quota',
    quota_period: 'period',
    key_rpm: 'key_rpm',
    key_tpm: 'key_tpm',
    project_rpm: 'project_rpm',
    project_tpm: 'project_tpm',
    max_tokens_cap: 'max_tokens_cap',
    allowed_models: 'models',
    mcp: 'mcp',
    ttl_seconds: 'cacheTtl',
    cache: 'cacheTtl',
    mode: 'cacheTtl',
    ttl_days: 'responsesTtl',
    responses: 'responsesTtl',
    model_aliases: 'aliases',
  };
  return map[last] ?? (param.startsWith('allowed_models') ? 'models' : param.startsWith('mcp') ? 'mcp' : param.startsWith('model_aliases') ? 'aliases' : null);
}

/** "60 requests/min per key"-style wording of a project's limits, for the card. */
export function describeLimit(value: number | null | undefined, unit: 'requests' | 'tokens'): string {
  if (value === null || value === undefined) return 'no limit';
  return `${value.toLocaleString('en-US')} ${unit}/min`;
}
