import { describe, expect, it } from 'vitest';
import { ConfigUnavailableError } from '../../lib/config/errors.js';
import type { ConfigDocument } from '../../lib/config/source.js';
import { configSourceFor, createRelayConfigStore } from '../../lib/config/store.js';
import { capturedLogger, manualClock } from '../helpers/fake-delivery-ports.js';

const valid = (password: string) =>
  JSON.stringify({
    auth: { method: 'basic', basic: { username: 'relay', password } },
    destinations: { default: { url: 'https://hooks.slack.com/services/T/B/x' } },
  });

function setup(documents: Array<ConfigDocument | Error>) {
  const clock = manualClock();
  const log = capturedLogger();
  let reads = 0;
  let previousReads = 0;
  const source = async () => {
    const next = documents[Math.min(reads, documents.length - 1)]!;
    reads++;
    if (next instanceof Error) throw next;
    return {
      ...next,
      ...(next.loadPrevious
        ? {
            loadPrevious: () => {
              previousReads++;
              return next.loadPrevious!();
            },
          }
        : {}),
    };
  };
  const store = createRelayConfigStore({ source, ttlSeconds: 300, logger: log.logger, now: clock.now });
  return { store, clock, log, reads: () => reads, previousReads: () => previousReads };
}

describe('the relay configuration store', () => {
  it('reads once per TTL and keeps the creation date', async () => {
    const since = new Date('2026-11-01T00:00:00Z');
    const { store, clock, reads } = setup([{ current: valid('a'), currentSince: since }]);
    expect((await store.current()).currentSince).toEqual(since);
    await store.current();
    expect(reads()).toBe(1);
    clock.advance(300_000);
    await store.current();
    expect(reads()).toBe(2);
  });

  it('a fresh copy comes at once, not as a promise: the relay then sets no deadline for it', async () => {
    const { store, clock } = setup([{ current: valid('a') }]);
    const first = store.current();
    expect(first).toBeInstanceOf(Promise);
    const loaded = await first;
    expect(store.current()).toBe(loaded);
    clock.advance(300_000);
    expect(store.current()).toBeInstanceOf(Promise);
  });

  it('reads the previous version only when asked, once per loaded copy, and ignores an unusable one', async () => {
    const { store, previousReads } = setup([{ current: valid('new'), loadPrevious: async () => valid('old') }]);
    const loaded = await store.current();
    expect(previousReads()).toBe(0);
    expect((await store.previous(loaded))?.auth.basic?.password).toBe('old');
    await store.previous(loaded);
    expect(previousReads()).toBe(1);

    const broken = setup([{ current: valid('new'), loadPrevious: async () => '{"auth":' }]);
    expect(await broken.store.previous(await broken.store.current())).toBeUndefined();
    const none = setup([{ current: valid('new') }]);
    expect(await none.store.previous(await none.store.current())).toBeUndefined();
  });

  it('names the invalid paths in the log, never the values, and rejects', async () => {
    const { store, log } = setup([
      { current: JSON.stringify({ auth: { method: 'basic', basic: { username: 'u:x', password: 'hunter2' } }, destinations: {} }) },
    ]);
    await expect(store.current()).rejects.toThrow(/auth\.basic\.username/);
    const record = log.records().find((r) => r['message'] === 'relay configuration is invalid');
    expect(record?.['problems']).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'destinations.default' })]));
    expect(log.lines.join('\n')).not.toContain('hunter2');
  });

  it('logs the reason when the store is unreachable', async () => {
    const { store, log } = setup([new ConfigUnavailableError('Cannot read', 'ResourceNotFoundException')]);
    await expect(store.current()).rejects.toThrow();
    expect(log.records()).toContainEqual(
      expect.objectContaining({ message: 'relay configuration is unavailable', reason: 'ResourceNotFoundException' }),
    );
  });

  it('keeps the last good copy through a failed refresh', async () => {
    const { store, clock, log } = setup([{ current: valid('a') }, new ConfigUnavailableError('x', 'ThrottlingException')]);
    await store.current();
    clock.advance(301_000);
    expect((await store.current()).config.auth.basic?.password).toBe('a');
    expect(log.lines.join('\n')).toContain('keeping the last good configuration');
  });

  it('on denied requests reads at most once per 30 s, also while the store keeps failing', async () => {
    const { store, clock, reads } = setup([{ current: valid('a') }, new ConfigUnavailableError('x', 'ThrottlingException')]);
    await store.current();
    clock.advance(301_000);
    await store.current(); // fails, keeps the old copy
    expect(reads()).toBe(2);
    for (let i = 0; i < 30; i++) {
      await store.refreshIfOlderThan(30_000);
      clock.advance(500);
    }
    // 15 s of denied requests after a failed reload: no further read.
    expect(reads()).toBe(2);
    clock.advance(15_000);
    await store.refreshIfOlderThan(30_000);
    expect(reads()).toBe(3);
  });

  it('a missing RELAY_CONFIG_SECRET_ID is a named error', async () => {
    await expect(configSourceFor(undefined, capturedLogger().logger, false)()).rejects.toMatchObject({
      reason: 'RELAY_CONFIG_SECRET_ID_not_set',
    });
  });
});

describe('a configuration with a typo', () => {
  it('is refused, and the log names the path with a hint, never a value', async () => {
    const typo = JSON.stringify({
      auth: { method: 'none', header: [{ key: 'X-Channel-Token', value: 'tok-9f2' }] },
      destinations: { default: { url: 'https://hooks.slack.com/services/T/B/x' } },
    });
    const { store, log } = setup([{ current: typo }]);
    await expect(store.current()).rejects.toMatchObject({ reason: 'configuration_invalid' });
    const record = log.records().find((r) => r['message'] === 'relay configuration is invalid');
    expect(record?.['problems']).toEqual([{ path: 'auth.header', problem: 'unknown key; did you mean "headers"?' }]);
    expect(log.lines.join('\n')).not.toContain('tok-9f2');
  });
});
