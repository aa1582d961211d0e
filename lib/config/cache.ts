export interface CacheOptions {
  ttlMs: number;
  now?: () => number;
  /**
   * When a reload fails but an older value exists, keep serving that value and try again
   * after this long: an outage of the store must not stop deliveries that worked a minute ago.
   */
  staleRetryMs?: number;
  onStale?: (error: unknown) => void;
}

export interface Cached<T> {
  value: T;
  loadedAt: number;
}

export interface RefreshingCache<T> {
  /** The cached value while fresh; otherwise one shared load for all concurrent callers. */
  get(): Promise<Cached<T>>;
  /** The cached value while fresh, at once; undefined when `get` would load. */
  fresh(): Cached<T> | undefined;
  /**
   * Loads again when neither the cached value nor the last attempt to load (successful or
   * not) is younger than `minAgeMs`; resolves to undefined when one is.
   */
  refreshIfOlderThan(minAgeMs: number): Promise<Cached<T> | undefined>;
}

/**
 * A time-to-live cache with single-flight loading. A failed first load rejects its callers;
 * a later call tries again.
 */
export function createRefreshingCache<T>(load: () => Promise<T>, options: CacheOptions): RefreshingCache<T> {
  const now = options.now ?? Date.now;
  let entry: Cached<T> | undefined;
  let inFlight: Promise<Cached<T>> | undefined;
  let lastAttemptAt = Number.NEGATIVE_INFINITY;

  const reload = (): Promise<Cached<T>> => {
    if (!inFlight) lastAttemptAt = now();
    inFlight ??= load()
      .then(
        (value) => {
          entry = { value, loadedAt: now() };
          return entry;
        },
        (error: unknown) => {
          if (!entry || options.staleRetryMs === undefined) throw error;
          options.onStale?.(error);
          entry = { value: entry.value, loadedAt: now() - options.ttlMs + options.staleRetryMs };
          return entry;
        },
      )
      .finally(() => {
        inFlight = undefined;
      });
    return inFlight;
  };

  const fresh = () => (entry && now() - entry.loadedAt < options.ttlMs ? entry : undefined);

  return {
    get() {
      const cached = fresh();
      return cached ? Promise.resolve(cached) : reload();
    },
    fresh,
    async refreshIfOlderThan(minAgeMs) {
      if (entry && now() - entry.loadedAt < minAgeMs) return undefined;
      // A failing store is not asked again on every call: at most once per `minAgeMs`.
      if (now() - lastAttemptAt < minAgeMs) return undefined;
      return reload();
    },
  };
}
