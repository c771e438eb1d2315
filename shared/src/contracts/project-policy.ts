import type { Guardrail } from './guardrails.js';
import { decodeCacheSetting, type CacheSetting } from './cache-setting.js';
import { decodeMcpSetting, type McpSetting } from './mcp-setting.js';
import type { BudgetRule } from './project-budgets.js';
import { ContractError, expectObject, expectString, parseVersioned } from './version.js';

/**
 * What the proxy enforces for a project, projected by the control plane into Redis at
 * RedisKeys.projectPolicy(id) and re-read by proxies after a project.updated message.
 * Every limit is null when not set (no limit).
 */
export type QuotaPeriod = 'total' | 'month';

export interface RateLimits {
  key_rpm: number | null;
  key_tpm: number | null;
  project_rpm: number | null;
  project_tpm: number | null;
}

export interface ProjectPolicy {
  v: 1;
  id: string;
  quota_tokens: number | null;
  quota_period: QuotaPeriod;
  rate_limits: RateLimits;
  /** Models the project may use; null: every model the gateway routes. */
  allowed_models: string[] | null;
  /** Largest max_tokens a request may ask for (and the one injected when it asks for none). */
  max_tokens_cap: number | null;
  /** MCP servers and tools the project's keys may use (mcp-setting.ts); null or absent: no MCP at all. */
  mcp?: McpSetting | null;
  /** Most completions (`n`) one request may ask for; null or absent: DEFAULT_MAX_N. */
  max_n?: number | null;
  /**
   * The project's spending budgets: not part of this payload but read with it, in the same MGET,
   * from RedisKeys.projectBudgets (project-budgets.ts). Absent when the project has none.
   */
  budgets?: readonly BudgetRule[];
  /**
   * The project's guardrails, in order: projected beside the policy (RedisKeys.projectGuardrails,
   * guardrails.ts) and attached by the proxy when it reads both; never part of the encoded policy.
   */
  guardrails?: Guardrail[] | null;
  /** The response cache (cache-setting.ts); projected only when on: null or absent is off. */
  cache?: CacheSetting | null;
  /** Model id asked for → model id served; null or absent: none. Projected only when set. */
  model_aliases?: Readonly<Record<string, string>> | null;
  /**
   * What a request translated between protocols does with a parameter that has no counterpart and
   * only tunes the answer: `drop` it (named in x-gateway-dropped-params) or `refuse` the request
   * (400 UNSUPPORTED_PARAMETER). Null or absent: drop. Projected only when `refuse`.
   */
  unsupported_params?: 'drop' | 'refuse' | null;
}

/** The values of a project's `unsupported_params` setting; the first is the default. */
export const UNSUPPORTED_PARAMS_MODES = ['drop', 'refuse'] as const;
export type UnsupportedParams = (typeof UNSUPPORTED_PARAMS_MODES)[number];

/** Most aliases one project may set (checked by the API, trusted by the proxy). */
export const MAX_MODEL_ALIASES = 1000;

/** The most completions one request may ask for when the project sets no max_n. */
export const DEFAULT_MAX_N = 8;

const NAME = 'ProjectPolicy';

export const NO_RATE_LIMITS: RateLimits = { key_rpm: null, key_tpm: null, project_rpm: null, project_tpm: null };

export function encodeProjectPolicy(policy: Omit<ProjectPolicy, 'v'>): string {
  const { id, quota_tokens, quota_period, rate_limits, allowed_models, max_tokens_cap, mcp, max_n, cache, model_aliases, unsupported_params } = policy;
  // Added without a version bump: a proxy that predates MCP ignores the field and serves no /mcp,
  // one that predates the response cache ignores `cache` and simply never caches; absent
  // `unsupported_params` is drop, so only refuse is written.
  const cached = cache !== undefined && cache !== null && cache.mode !== 'off' ? { cache } : {};
  return JSON.stringify({ v: 1, id, quota_tokens, quota_period, rate_limits, allowed_models, max_tokens_cap, ...(mcp ? { mcp } : {}), ...(max_n != null ? { max_n } : {}), ...cached, ...(model_aliases ? { model_aliases } : {}), ...(unsupported_params === 'refuse' ? { unsupported_params } : {}) });
}

function limit(obj: Record<string, unknown>, field: string): number | null {
  const value = obj[field];
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new ContractError(NAME, `${field} must be a non-negative integer or null`);
  return value;
}

export function decodeProjectPolicy(raw: string): ProjectPolicy {
  const obj = parseVersioned(NAME, raw, [1]);
  const period = obj.quota_period;
  if (period !== 'total' && period !== 'month') throw new ContractError(NAME, 'quota_period must be total or month');
  const rates = expectObject(NAME, obj.rate_limits ?? {});
  const models = obj.allowed_models;
  if (models !== null && models !== undefined && !(Array.isArray(models) && models.every((m) => typeof m === 'string'))) {
    throw new ContractError(NAME, 'allowed_models must be a list of strings or null');
  }
  const mcp = decodeMcpSetting(NAME, obj.mcp);
  const cache = decodeCacheSetting(NAME, obj.cache);
  const aliases = obj.model_aliases;
  if (aliases !== null && aliases !== undefined && !(typeof aliases === 'object' && !Array.isArray(aliases) && Object.values(aliases).every((m) => typeof m === 'string'))) {
    throw new ContractError(NAME, 'model_aliases must map model ids to model ids, or be null');
  }
  const unsupported = obj.unsupported_params;
  if (unsupported !== null && unsupported !== undefined && unsupported !== 'drop' && unsupported !== 'refuse') {
    throw new ContractError(NAME, 'unsupported_params must be drop, refuse or null');
  }
  return {
    v: 1,
    id: expectString(NAME, obj, 'id'),
    quota_tokens: limit(obj, 'quota_tokens'),
    quota_period: period,
    rate_limits: {
      key_rpm: limit(rates, 'key_rpm'),
      key_tpm: limit(rates, 'key_tpm'),
      project_rpm: limit(rates, 'project_rpm'),
      project_tpm: limit(rates, 'project_tpm'),
    },
    allowed_models: (models as string[] | null | undefined) ?? null,
    max_tokens_cap: limit(obj, 'max_tokens_cap'),
    ...(mcp === null ? {} : { mcp }),
    ...(obj.max_n == null ? {} : { max_n: limit(obj, 'max_n') }),
    ...(cache === null ? {} : { cache }),
    ...(aliases === null || aliases === undefined ? {} : { model_aliases: aliases as Record<string, string> }),
    ...(unsupported === null || unsupported === undefined ? {} : { unsupported_params: unsupported }),
  };
}

/** The ledger period a quota counts in at `now`: `total`, or the UTC month as `m202611`. */
export function quotaPeriodId(period: QuotaPeriod, now: number): string {
  if (period === 'total') return 'total';
  const d = new Date(now);
  return `m${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** [start, end) in Unix ms of the period `periodId` names (the whole of time for `total`). */
export function quotaPeriodRange(periodId: string): { from: number; to: number } {
  if (periodId === 'total') return { from: 0, to: Number.MAX_SAFE_INTEGER };
  const year = Number(periodId.slice(1, 5));
  const month = Number(periodId.slice(5, 7)) - 1;
  return { from: Date.UTC(year, month, 1), to: Date.UTC(year, month + 1, 1) };
}
