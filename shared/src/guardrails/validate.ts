import {
  GUARDRAIL_TYPES,
  MAX_GUARDRAIL_PATTERNS,
  MAX_GUARDRAILS,
  PII_ENTITIES,
  STREAM_WINDOW_MAX,
  WEBHOOK_TIMEOUT_DEFAULT_MS,
  WEBHOOK_TIMEOUT_MAX_MS,
  type Guardrail,
} from '../contracts/guardrails.js';
import { patternProblem } from './re2.js';

/** A refused list: the guardrail at fault (its id, else its position) and why. */
export interface GuardrailProblem {
  guardrail: string;
  message: string;
}

const ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const LABEL = /^[A-Z][A-Z0-9_]{0,31}$/;
const STAGES = ['input', 'output', 'both'];
const ACTIONS = ['block', 'mask', 'flag'];
const FIELDS: Record<(typeof GUARDRAIL_TYPES)[number], readonly string[]> = {
  regex: ['patterns', 'label'],
  pii: ['entities'],
  webhook: ['url', 'secret', 'timeout_ms', 'failure_mode'],
  moderation: ['provider', 'model', 'thresholds'],
};

type Obj = Record<string, unknown>;

/**
 * Checks a list as the API takes it (DESIGN §7): every field known and well-formed, ids unique,
 * every regex compiled by RE2. The webhook secret is not checked here (the API generates or
 * checks it). Returns the normalised list (defaults filled) or the first problem.
 */
export function checkGuardrails(value: unknown): { guardrails: Guardrail[] } | GuardrailProblem {
  if (!Array.isArray(value)) return { guardrail: '(list)', message: 'guardrails must be a list' };
  if (value.length > MAX_GUARDRAILS) return { guardrail: '(list)', message: `at most ${MAX_GUARDRAILS} guardrails` };
  const seen = new Set<string>();
  const out: Guardrail[] = [];
  for (const [index, item] of value.entries()) {
    const name = typeof (item as Obj | null)?.id === 'string' ? ((item as Obj).id as string) : `#${index}`;
    const problem = (message: string): GuardrailProblem => ({ guardrail: name, message: `guardrail ${name}: ${message}` });
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return problem('must be an object');
    const g = item as Obj;
    if (typeof g.id !== 'string' || !ID.test(g.id)) return problem('id must be 1 to 64 letters, digits, "_", "." or "-"');
    if (seen.has(g.id)) return problem('id is used twice');
    seen.add(g.id);
    if (!STAGES.includes(g.stage as string)) return problem('stage must be input, output or both');
    if (!ACTIONS.includes(g.action as string)) return problem('action must be block, mask or flag');
    if (!(GUARDRAIL_TYPES as readonly string[]).includes(g.type as string)) return problem(`type must be one of ${GUARDRAIL_TYPES.join(', ')}`);
    const type = g.type as (typeof GUARDRAIL_TYPES)[number];
    for (const field of Object.keys(g)) {
      if (!['id', 'stage', 'action', 'type', 'stream_window', 'mcp', ...FIELDS[type]].includes(field)) return problem(`unknown field ${field} for type ${type}`);
    }
    if (g.mcp !== undefined && typeof g.mcp !== 'boolean') return problem('mcp must be true or false');
    if (g.mcp === true && g.stage === 'output') return problem('mcp applies to input guards (stage input or both): it reads the arguments of MCP tool calls');
    if (g.stream_window !== undefined && !(Number.isInteger(g.stream_window) && (g.stream_window as number) >= 16 && (g.stream_window as number) <= STREAM_WINDOW_MAX)) {
      return problem(`stream_window must be an integer from 16 to ${STREAM_WINDOW_MAX}`);
    }
    const why = typeProblem(type, g);
    if (why !== null) return problem(why);
    out.push(normalise(type, g));
  }
  return { guardrails: out };
}

function typeProblem(type: (typeof GUARDRAIL_TYPES)[number], g: Obj): string | null {
  switch (type) {
    case 'regex': {
      const patterns = g.patterns;
      if (!Array.isArray(patterns) || patterns.length === 0 || patterns.length > MAX_GUARDRAIL_PATTERNS) return `patterns must be a list of 1 to ${MAX_GUARDRAIL_PATTERNS} RE2 patterns`;
      for (const [i, p] of patterns.entries()) {
        if (typeof p !== 'string' || p.length === 0 || p.length > 1000) return `patterns[${i}] must be a string of 1 to 1000 characters`;
        const refused = patternProblem(p);
        if (refused !== null) return `patterns[${i}] is not valid RE2 syntax (${refused})`;
      }
      if (g.label !== undefined && (typeof g.label !== 'string' || !LABEL.test(g.label))) return 'label must be upper-case letters, digits and "_" (up to 32)';
      return null;
    }
    case 'pii': {
      const entities = g.entities;
      if (!Array.isArray(entities) || entities.length === 0) return `entities must be a non-empty list of ${PII_ENTITIES.join(', ')}`;
      for (const e of entities) if (!(PII_ENTITIES as readonly string[]).includes(e as string)) return `unknown entity ${String(e)} (one of ${PII_ENTITIES.join(', ')})`;
      return null;
    }
    case 'webhook': {
      if (typeof g.url !== 'string' || !/^https?:\/\/[^\s]+$/.test(g.url)) return 'url must be an http(s) URL';
      try {
        new URL(g.url);
      } catch {
        return 'url must be an http(s) URL';
      }
      if (g.timeout_ms !== undefined && !(Number.isInteger(g.timeout_ms) && (g.timeout_ms as number) >= 1 && (g.timeout_ms as number) <= WEBHOOK_TIMEOUT_MAX_MS)) {
        return `timeout_ms must be an integer from 1 to ${WEBHOOK_TIMEOUT_MAX_MS}`;
      }
      if (g.failure_mode !== undefined && g.failure_mode !== 'open' && g.failure_mode !== 'closed') return 'failure_mode must be open or closed';
      if (g.secret !== undefined && typeof g.secret !== 'string') return 'secret must be a string';
      return null;
    }
    case 'moderation': {
      if (typeof g.provider !== 'string' || g.provider.length === 0 || g.provider.length > 64) return 'provider must name a provider of the providers file';
      if (g.model !== undefined && (typeof g.model !== 'string' || g.model.length === 0 || g.model.length > 128)) return 'model must be a model name';
      if (g.action === 'mask') return 'a moderation guardrail can block or flag, not mask';
      if (g.thresholds !== undefined) {
        if (typeof g.thresholds !== 'object' || g.thresholds === null || Array.isArray(g.thresholds)) return 'thresholds must map categories to scores';
        for (const [category, score] of Object.entries(g.thresholds)) {
          if (typeof score !== 'number' || !(score >= 0 && score <= 1)) return `thresholds.${category} must be a score from 0 to 1`;
        }
      }
      return null;
    }
  }
}

function normalise(type: (typeof GUARDRAIL_TYPES)[number], g: Obj): Guardrail {
  const base = { id: g.id, stage: g.stage, action: g.action, ...(g.stream_window === undefined ? {} : { stream_window: g.stream_window }), ...(g.mcp === true ? { mcp: true } : {}) };
  switch (type) {
    case 'regex':
      return { ...base, type, patterns: g.patterns, ...(g.label === undefined ? {} : { label: g.label }) } as Guardrail;
    case 'pii':
      return { ...base, type, entities: [...new Set(g.entities as string[])] } as Guardrail;
    case 'webhook':
      return { ...base, type, url: g.url, secret: g.secret ?? '', timeout_ms: g.timeout_ms ?? WEBHOOK_TIMEOUT_DEFAULT_MS, failure_mode: g.failure_mode ?? 'closed' } as Guardrail;
    case 'moderation':
      return { ...base, type, provider: g.provider, ...(g.model === undefined ? {} : { model: g.model }), ...(g.thresholds === undefined ? {} : { thresholds: g.thresholds }) } as Guardrail;
  }
}
