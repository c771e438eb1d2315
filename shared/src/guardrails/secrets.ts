/**
 * Credentials of the major model providers, clouds and developer platforms, by their published
 * prefixes and shapes. These are the gateway's own patterns (fixed, anchored on literal prefixes,
 * no nested repetition), so the built-in engine runs them in linear time. Each comes with the
 * literals every match of it contains: one pass over the text finds which literals it holds
 * (usually none: most prompts carry no credential), and only their patterns then scan it.
 */
export interface SecretPattern {
  readonly literals: readonly string[];
  readonly re: RegExp;
}

const pattern = (literals: string[], re: RegExp): SecretPattern => ({ literals, re });

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // Anthropic (before OpenAI's `sk-`, which it would also match)
  pattern(['sk-ant-'], /\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}/g),
  // OpenAI: sk-…, sk-proj-…, sk-svcacct-…
  pattern(['sk-'], /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g),
  // AWS access key ids
  pattern(['AKIA', 'ASIA', 'ABIA', 'ACCA'], /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g),
  // GitHub tokens (classic, OAuth, user-to-server, server-to-server, refresh) and fine-grained PATs
  pattern(['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g),
  pattern(['github_pat_'], /\bgithub_pat_[A-Za-z0-9_]{60,}\b/g),
  // Slack tokens
  pattern(['xox'], /\bxox[abposr]-[A-Za-z0-9-]{10,}/g),
  // Google API keys
  pattern(['AIza'], /\bAIza[0-9A-Za-z_-]{35}\b/g),
  // Stripe secret and restricted keys
  pattern(['_live_', '_test_'], /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g),
  // Hugging Face, Groq, xAI, Replicate, GitLab, npm
  pattern(['hf_'], /\bhf_[A-Za-z0-9]{30,}\b/g),
  pattern(['gsk_'], /\bgsk_[A-Za-z0-9]{40,}\b/g),
  pattern(['xai-'], /\bxai-[A-Za-z0-9]{40,}\b/g),
  pattern(['r8_'], /\br8_[A-Za-z0-9]{30,}\b/g),
  pattern(['glpat-'], /\bglpat-[A-Za-z0-9_-]{20,}\b/g),
  pattern(['npm_'], /\bnpm_[A-Za-z0-9]{36}\b/g),
  // JSON Web Tokens: base64url header starting `{"` then payload and signature
  pattern(['eyJ'], /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g),
  // PEM private keys
  pattern(['PRIVATE KEY-----'], /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]{16,8192}?-----END (?:[A-Z]+ )?PRIVATE KEY-----/g),
];

/** Every literal of SECRET_PATTERNS, in one alternation: one pass finds which are present. */
const LITERALS = new RegExp([...new Set(SECRET_PATTERNS.flatMap((p) => p.literals))].map((l) => l.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')).join('|'), 'g');

/** The patterns worth running on `text`: those one of whose literals it contains. */
export function secretPatternsFor(text: string): SecretPattern[] {
  LITERALS.lastIndex = 0;
  let found: Set<string> | null = null;
  for (let m = LITERALS.exec(text); m !== null; m = LITERALS.exec(text)) (found ??= new Set()).add(m[0]);
  if (found === null) return [];
  const seen = [...found];
  // A literal inside a longer one found at the same place (`sk-` in `sk-ant-`) is present too.
  return SECRET_PATTERNS.filter((p) => p.literals.some((l) => seen.some((f) => f.includes(l))));
}
