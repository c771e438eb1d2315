/**
 * Credentials of the major model providers, clouds and developer platforms, by their published
 * prefixes and shapes. These are the gateway's own patterns (fixed, anchored on literal prefixes,
 * no nested repetition), so the built-in engine runs them in linear time.
 */
export const SECRET_PATTERNS: readonly RegExp[] = [
  // Anthropic (before OpenAI's `sk-`, which it would also match)
  /\bsk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_-]{20,}/g,
  // OpenAI: sk-…, sk-proj-…, sk-svcacct-…
  /\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}/g,
  // AWS access key ids
  /\b(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b/g,
  // GitHub tokens (classic, OAuth, user-to-server, server-to-server, refresh) and fine-grained PATs
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{60,}\b/g,
  // Slack tokens
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/g,
  // Google API keys
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  // Stripe secret and restricted keys
  /\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b/g,
  // Hugging Face, Groq, xAI, Replicate, GitLab, npm
  /\bhf_[A-Za-z0-9]{30,}\b/g,
  /\bgsk_[A-Za-z0-9]{40,}\b/g,
  /\bxai-[A-Za-z0-9]{40,}\b/g,
  /\br8_[A-Za-z0-9]{30,}\b/g,
  /\bglpat-[A-Za-z0-9_-]{20,}\b/g,
  /\bnpm_[A-Za-z0-9]{36}\b/g,
  // JSON Web Tokens: base64url header starting `{"` then payload and signature
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
  // PEM private keys
  /-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]{16,8192}?-----END (?:[A-Z]+ )?PRIVATE KEY-----/g,
];
