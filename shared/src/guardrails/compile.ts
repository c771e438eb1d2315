import type { Guardrail } from '../contracts/guardrails.js';
import { piiDetector } from './pii.js';
import { regexDetector } from './re2.js';
import type { Detector } from './spans.js';

/** The detector of a guardrail the gateway runs itself (regex, pii); null for remote ones (webhook, moderation). */
export function localDetector(g: Guardrail): Detector | null {
  if (g.type === 'regex') return regexDetector(g.patterns, g.label ?? 'REDACTED');
  if (g.type === 'pii') return piiDetector(g.entities);
  return null;
}
