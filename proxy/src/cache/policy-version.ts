import { hash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { ProjectPolicy } from '@gateway/shared';

const canonicalize = createRequire(import.meta.url)('canonicalize') as (input: unknown) => string | undefined;

/**
 * The version of the parts of a project's policy that decide what an answer may be: its
 * guardrails, the max_tokens cap, the most completions, the model allow-list and aliases. It is part of every
 * cache entry's name, so an answer stored under one version is unreachable under the next, on
 * every proxy at once (each reads the new policy when told of the change) and whether the miss that
 * stores it was still in flight or not: nothing has to be found and deleted. Computed once per
 * policy object (a policy is replaced, never changed, when the project's settings change).
 */
const versions = new WeakMap<ProjectPolicy, string>();

export function answerPolicyVersion(policy: ProjectPolicy): string {
  let version = versions.get(policy);
  if (version === undefined) {
    const parts = { guardrails: policy.guardrails ?? null, max_tokens_cap: policy.max_tokens_cap, max_n: policy.max_n ?? null, allowed_models: policy.allowed_models, model_aliases: policy.model_aliases ?? null, ...refusesDrops(policy) };
    // 72 bits: a name segment, not a secret; enough that two settings of one project never meet.
    version = hash('sha256', canonicalize(parts) ?? '', 'base64url').slice(0, 12);
    versions.set(policy, version);
  }
  return version;
}

/** Named only when set, so the versions of projects that never set it stay what they were. */
function refusesDrops(policy: ProjectPolicy): { unsupported_params?: 'refuse' } {
  return policy.unsupported_params === 'refuse' ? { unsupported_params: 'refuse' } : {};
}
