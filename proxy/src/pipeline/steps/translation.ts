import type { ProjectPolicy } from '@gateway/shared';
import { dropRefused, judgeParams, type ParamTable } from '../../conversion/param-support.js';
import type { ParsedRequest } from '../../protocols/protocol.js';
import type { Route, Target } from '../../routing/model-router.js';
import type { RequestContext } from '../context.js';

/**
 * translation: what the request loses on its way to each target of its route, judged before
 * anything is reserved or counted. A target sent the body as it came loses nothing; any other
 * loses what the inbound protocol's translation left out (ParsedRequest.dropped) and what its own
 * provider's translation drops (ProviderAdapter.paramsFor). A field some target would have to
 * refuse is refused whichever target would be drawn, so a weighted route answers one body one way;
 * so is a drop, when the project refuses drops (`unsupported_params: "refuse"`). What is dropped
 * is named to the client in `x-gateway-dropped-params` by the provider step, for the target served.
 * On a route of several targets, a value some target's translation cannot write (ParamTable.refusal)
 * is refused the same way.
 */
export function paramsJudged(ctx: RequestContext): void {
  const parsed = ctx.parsed as ParsedRequest;
  const route = ctx.route as Route;
  const inbound = parsed.dropped ?? null;
  // A route of providers that take the internal request as it is, and nothing left out on the way in: nothing to judge.
  if (inbound === null && !route.translates) return;
  const refuseDrops = (ctx.policy as ProjectPolicy).unsupported_params === 'refuse';
  let dropped: Map<Target, string> | null = null;
  const several = route.targets.length > 1;
  let checked: Set<ParamTable> | null = null;
  for (const target of route.targets) {
    if (parsed.native !== undefined && target.native.has(parsed.native.protocol)) continue;
    const table = target.params;
    const judged = table === null ? null : judgeParams(parsed.chat, table);
    if (judged?.refused != null) return ctx.fail(judged.refused, 'error');
    // The values too, once per provider kind, when the draw could otherwise decide.
    if (several && table?.refusal !== undefined && !(checked ??= new Set()).has(table)) {
      checked.add(table);
      const refused = table.refusal(parsed.chat);
      if (refused !== null) return ctx.fail(refused, 'error');
    }
    const lost = inbound === null ? (judged?.dropped ?? []) : judged === null || judged.dropped.length === 0 ? inbound : [...inbound, ...judged.dropped];
    if (lost.length === 0) continue;
    if (refuseDrops) return ctx.fail(dropRefused(lost[0] as string, inbound !== null && inbound.includes(lost[0] as string) ? null : (table?.provider ?? null)), 'error');
    (dropped ??= new Map()).set(target, lost.join(','));
  }
  ctx.dropped = dropped;
}
