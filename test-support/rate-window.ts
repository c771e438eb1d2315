/**
 * Rate limits count in fixed one-minute windows of the wall clock (proxy/src/policy/rate-limiter.ts):
 * a request after a minute's edge starts a new window. A test that fills a small limit and
 * expects the next request refused first waits, when the current minute is nearly over, for the
 * next one to begin, so that all its requests fall in one window.
 */
export async function inOneRateWindow(needMs = 15_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < needMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
