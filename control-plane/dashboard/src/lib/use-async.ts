import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

/**
 * Loads data for a view and reloads it on demand. An answer that arrives after a newer request
 * was made (the user changed the filter meanwhile) is dropped, so a slow page of results never
 * overwrites a fresh one.
 */
export interface Async<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload(): void;
}

export function useAsync<T>(load: () => Promise<T>, deps: readonly unknown[]): Async<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({ data: undefined, error: null, loading: true });
  const generation = useRef(0);
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);

  useEffect(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => {
        if (mine === generation.current) setState({ data, error: null, loading: false });
      },
      (error: unknown) => {
        if (mine === generation.current) setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    // `load` is a fresh closure every render; the caller names what it depends on in `deps`.
  }, [...deps, tick]);

  return { ...state, reload };
}
