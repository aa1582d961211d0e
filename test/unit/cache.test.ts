import { describe, expect, it } from 'vitest';
import { createRefreshingCache } from '../../lib/config/cache.js';

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('createRefreshingCache', () => {
  it('shares one load among concurrent misses and serves it until the TTL ends', async () => {
    const c = clock();
    let loads = 0;
    const cache = createRefreshingCache(async () => ++loads, { ttlMs: 1000, now: c.now });
    const values = await Promise.all([cache.get(), cache.get(), cache.get()]);
    expect(values.map((v) => v.value)).toEqual([1, 1, 1]);
    c.advance(999);
    expect((await cache.get()).value).toBe(1);
    c.advance(1);
    expect((await cache.get()).value).toBe(2);
    expect(loads).toBe(2);
  });

  it('refreshes on demand only when the value is old enough', async () => {
    const c = clock();
    let loads = 0;
    const cache = createRefreshingCache(async () => ++loads, { ttlMs: 300_000, now: c.now });
    await cache.get();
    expect(await cache.refreshIfOlderThan(30_000)).toBeUndefined();
    c.advance(30_000);
    expect((await cache.refreshIfOlderThan(30_000))?.value).toBe(2);
  });

  it('rejects a failed first load, then tries again', async () => {
    let fail = true;
    const cache = createRefreshingCache(
      async () => {
        if (fail) throw new Error('down');
        return 'ok';
      },
      { ttlMs: 1000, staleRetryMs: 100 },
    );
    await expect(cache.get()).rejects.toThrow('down');
    fail = false;
    expect((await cache.get()).value).toBe('ok');
  });

  it('keeps serving the last good value through an outage and retries after staleRetryMs', async () => {
    const c = clock();
    let fail = false;
    let loads = 0;
    const stale: unknown[] = [];
    const cache = createRefreshingCache(
      async () => {
        loads++;
        if (fail) throw new Error('down');
        return loads;
      },
      { ttlMs: 1000, now: c.now, staleRetryMs: 100, onStale: (e) => stale.push(e) },
    );
    await cache.get();
    fail = true;
    c.advance(1000);
    expect((await cache.get()).value).toBe(1);
    expect((await cache.get()).value).toBe(1);
    expect(loads).toBe(2);
    expect(stale).toHaveLength(1);
    fail = false;
    c.advance(100);
    expect((await cache.get()).value).toBe(3);
  });
});
