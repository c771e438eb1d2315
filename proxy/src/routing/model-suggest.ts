import { distance } from 'fastest-levenshtein';
import { Errors, type GatewayError } from '@gateway/shared';

/** Ids listed in the message when none is close to what was asked for. */
const LISTED = 5;

/**
 * The 404 for a model no provider serves, naming the nearest served id (a typo, a missing
 * version suffix, another vendor's spelling) or, when none is close, some that are. Only on the
 * refusal path: the served ids are walked once per unknown model asked for.
 */
export function unknownModel(model: string, served: Iterable<string>): GatewayError {
  const ids = [...served];
  const nearest = nearestModel(model, ids);
  const hint =
    nearest !== null
      ? ` Did you mean \`${nearest}\`?`
      : ids.length > 0
        ? ` It serves ${ids.slice(0, LISTED).map((id) => `\`${id}\``).join(', ')}${ids.length > LISTED ? ', …' : ''}; GET /v1/models lists the ones your key may use.`
        : '';
  return Errors.modelNotFound(model, hint);
}

/** The served id closest to `model` by edit distance (case ignored), if it is close enough to be a slip. */
export function nearestModel(model: string, served: readonly string[]): string | null {
  const asked = model.toLowerCase();
  if (asked === '') return null;
  let best: string | null = null;
  let bestScore = Infinity;
  for (const id of served) {
    const candidate = id.toLowerCase();
    // One inside the other (`gpt-4o` for `openai/gpt-4o`, a dropped date suffix) counts as close.
    const score = candidate.includes(asked) || asked.includes(candidate) ? Math.abs(candidate.length - asked.length) / 4 : distance(asked, candidate);
    if (score < bestScore) {
      bestScore = score;
      best = id;
    }
  }
  const tolerance = Math.max(2, Math.floor(asked.length * 0.4));
  return bestScore <= tolerance ? best : null;
}
