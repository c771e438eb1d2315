import type { GuardrailAction } from './audit-event.js';
import { ContractError, expectString, parseVersioned } from './version.js';

/**
 * A project's guardrails (DESIGN §7 "Guardrails"): an ordered list of checks on what goes to the
 * providers (`input`) and what comes back (`output`). Stored with the project, projected in its
 * policy (project-policy.ts) like the `mcp` setting; the proxy compiles them once per policy.
 */
/** Where a guardrail runs: on the prompt, on the answer, or both (a decision names one stage). */
export type GuardrailScope = 'input' | 'output' | 'both';

export const PII_ENTITIES = ['email', 'phone', 'credit_card', 'iban', 'us_ssn', 'ip_address', 'secret'] as const;
export type PiiEntity = (typeof PII_ENTITIES)[number];

interface GuardrailBase {
  id: string;
  stage: GuardrailScope;
  action: GuardrailAction;
  /**
   * Characters of a streamed answer held back before release, so that a match split across
   * chunks is seen whole before any of it leaves (output stage; default STREAM_WINDOW_DEFAULT).
   */
  stream_window?: number;
  /** An input guard that also reads the arguments of MCP tool calls (`tools/call` on /mcp and /mcp/{server}). */
  mcp?: boolean;
}

export interface RegexGuardrail extends GuardrailBase {
  type: 'regex';
  /** RE2 syntax, run by a linear-time engine. */
  patterns: string[];
  /** The placeholder's name when masking (`<LABEL_1>`); default `REDACTED`. */
  label?: string;
}

export interface PiiGuardrail extends GuardrailBase {
  type: 'pii';
  entities: PiiEntity[];
}

export interface WebhookGuardrail extends GuardrailBase {
  type: 'webhook';
  url: string;
  /** Standard Webhooks secret (`whsec_…`). */
  secret: string;
  timeout_ms: number;
  failure_mode: 'open' | 'closed';
}

export interface ModerationGuardrail extends GuardrailBase {
  type: 'moderation';
  /** A provider of the providers file that answers OpenAI's `/v1/moderations`. */
  provider: string;
  model?: string;
  /** Category → score at or above which the text is caught; categories not listed count when flagged. */
  thresholds?: Record<string, number>;
}

export type Guardrail = RegexGuardrail | PiiGuardrail | WebhookGuardrail | ModerationGuardrail;

export const GUARDRAIL_TYPES = ['regex', 'pii', 'webhook', 'moderation'] as const;
export const MAX_GUARDRAILS = 50;
export const MAX_GUARDRAIL_PATTERNS = 100;
export const STREAM_WINDOW_DEFAULT = 256;
export const STREAM_WINDOW_MAX = 8192;
export const WEBHOOK_TIMEOUT_DEFAULT_MS = 2000;
export const WEBHOOK_TIMEOUT_MAX_MS = 30_000;

/** The guardrail applies to `stage` (an input or output check). */
export function appliesTo(guardrail: Guardrail, stage: 'input' | 'output'): boolean {
  return guardrail.stage === stage || guardrail.stage === 'both';
}

/**
 * The list as the proxy reads it from a policy: the API validated it on write, so only its shape
 * is checked here; anything malformed is a contract error (the policy is then refused whole).
 */
export function decodeGuardrails(name: string, value: unknown): Guardrail[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value)) throw new ContractError(name, 'guardrails must be a list or null');
  for (const g of value as unknown[]) {
    const item = g as Partial<Guardrail> | null;
    if (typeof item !== 'object' || item === null || typeof item.id !== 'string') throw new ContractError(name, 'a guardrail must be an object with an id');
    if (!(GUARDRAIL_TYPES as readonly string[]).includes(item.type as string)) throw new ContractError(name, `guardrail ${item.id}: unknown type`);
    if (item.stage !== 'input' && item.stage !== 'output' && item.stage !== 'both') throw new ContractError(name, `guardrail ${item.id}: unknown stage`);
    if (item.action !== 'block' && item.action !== 'mask' && item.action !== 'flag') throw new ContractError(name, `guardrail ${item.id}: unknown action`);
  }
  return value.length === 0 ? null : (value as Guardrail[]);
}

/** What is projected at RedisKeys.projectGuardrails: the list, versioned. */
export interface GuardrailSet {
  v: 1;
  project_id: string;
  guardrails: Guardrail[];
}

const SET = 'GuardrailSet';

export function encodeGuardrailSet(projectId: string, guardrails: readonly Guardrail[]): string {
  return JSON.stringify({ v: 1, project_id: projectId, guardrails });
}

export function decodeGuardrailSet(raw: string): GuardrailSet {
  const obj = parseVersioned(SET, raw, [1]);
  return { v: 1, project_id: expectString(SET, obj, 'project_id'), guardrails: decodeGuardrails(SET, obj.guardrails) ?? [] };
}
