import { useCallback, useEffect, useRef, useState } from "preact/hooks";

export interface AsyncState<T> {
  data: T | undefined;
  error: Error | undefined;
  loading: boolean;
  /** Loads again; `quiet` keeps the current data on screen (live refresh) instead of showing the loading state. */
  reload: (quiet?: boolean) => void;
}

/** Runs `load` when `deps` change; a later run's answer always wins over an earlier one's. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): AsyncState<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const run = useCallback((quiet = false) => {
    const mine = ++generation.current;
    if (!quiet) setLoading(true);
    loadRef
      .current()
      .then((value) => {
        if (mine !== generation.current) return;
        setData(value);
        setError(undefined);
      })
      .catch((e: unknown) => {
        if (mine !== generation.current) return;
        setError(e instanceof Error ? e : new Error(String(e)));
      })
      .finally(() => {
        if (mine === generation.current) setLoading(false);
      });
  }, []);

  useEffect(() => run(), deps);
  return { data, error, loading, reload: run };
}

/** Calls `tick` every `ms` while the page is visible and `enabled` holds. */
export function useInterval(tick: () => void, ms: number, enabled: boolean): void {
  const tickRef = useRef(tick);
  tickRef.current = tick;
  useEffect(() => {
    if (!enabled) return;
    const id = setInterval(() => {
      if (document.visibilityState === "visible") tickRef.current();
    }, ms);
    return () => clearInterval(id);
  }, [ms, enabled]);
}
