/**
 * `Promise.all` over `count` calls with at most `limit` running at once, results in call order.
 * An adapter that must split one client request into several provider requests (an embeddings
 * model that takes one text per request) uses it so that a long input does not take every
 * connection of the pool, or overflow its waiting bound, at once. The first failure rejects and
 * no further call starts.
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
