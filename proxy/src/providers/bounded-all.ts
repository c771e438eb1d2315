import { Cancel } from './cancel.js';

/** Provider requests of one client request in flight at once, when an adapter has to split it. */
export const SPLIT_IN_FLIGHT = 8;

/**
 * `Promise.all` over `count` calls with at most `limit` running at once, results in call order.
 * An adapter that must split one client request into several provider requests (an embeddings
 * model that takes one text per request) uses it so that a long input does not take every
 * connection of the pool, or overflow its waiting bound, at once. The first failure rejects and
 * no further call starts (boundedCalls, below, also stops the calls in flight).
 */
export function boundedAll<R>(count: number, limit: number, call: (index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(count);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < count) {
      const index = next++;
      try {
        results[index] = await call(index);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  const workers: Promise<void>[] = [];
  for (let i = 0; i < Math.min(limit, count); i++) workers.push(worker());
  return Promise.all(workers).then(() => results);
}

/**
 * boundedAll for provider requests split from one client request: each gets its own Cancel, so
 * that the client's going away (`parent` aborted) stops every one in flight, not only the last to
 * register (a Cancel holds one attempt's abort), and the first failure stops its siblings too:
 * their answers would be thrown away.
 */
export async function boundedCalls<R>(parent: Cancel, count: number, limit: number, call: (index: number, cancel: Cancel) => Promise<R>): Promise<R[]> {
  const live = new Set<Cancel>();
  parent.onAbort(() => {
    for (const cancel of live) cancel.abort();
  });
  try {
    return await boundedAll(count, limit, async (index) => {
      const own = new Cancel();
      if (parent.aborted) own.abort();
      live.add(own);
      try {
        return await call(index, own);
      } finally {
        live.delete(own);
      }
    });
  } catch (err) {
    for (const cancel of live) cancel.abort();
    throw err;
  } finally {
    parent.clear();
  }
}
