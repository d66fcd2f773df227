/** A view's data from the API: loaded when the view opens, reloaded on demand or every few seconds. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { getJson } from './api.ts';

/** The state of a resource. */
export interface Resource<T> {
  readonly data: T | undefined;
  readonly error: Error | undefined;
  readonly loading: boolean;
  /** Reads it again now. */
  reload(): void;
}

/**
 * `GET /api<path>`, again whenever `path` changes, and every `refreshMs` while the view is open (the page is
 * refreshed without a reload). A reload asked for while one is under way follows it, never runs beside it.
 */
export function useResource<T>(
  path: string | undefined,
  options: { readonly refreshMs?: number } = {},
): Resource<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [loading, setLoading] = useState(path !== undefined);
  const inFlight = useRef(false);
  /** A reload asked for while one was under way: it runs once that one ends, so it reads the newest data. */
  const again = useRef(false);
  const latest = useRef(path);
  latest.current = path;

  const load = useCallback(() => {
    if (path === undefined) return;
    if (inFlight.current) {
      again.current = true;
      return;
    }
    inFlight.current = true;
    setLoading(true);
    getJson<T>(path)
      .then((value) => {
        if (latest.current !== path) return;
        setData(value);
        setError(undefined);
      })
      .catch((cause: unknown) => {
        if (latest.current !== path) return;
        setError(cause instanceof Error ? cause : new Error(String(cause)));
      })
      .finally(() => {
        inFlight.current = false;
        setLoading(false);
        if (again.current && latest.current === path) {
          again.current = false;
          load();
        }
      });
  }, [path]);

  useEffect(() => {
    setData(undefined);
    setError(undefined);
    load();
  }, [load]);

  useEffect(() => {
    if (options.refreshMs === undefined) return undefined;
    const timer = window.setInterval(load, options.refreshMs);
    return () => window.clearInterval(timer);
  }, [load, options.refreshMs]);

  return { data, error, loading, reload: load };
}
