import { describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { createRequestAuthenticator } from '../../lib/auth/request-authenticator.js';
import type { LoadedConfig } from '../../lib/config/load.js';
import type { AuthConfig, RelayConfig } from '../../lib/config/schema.js';
import { capturedLogger, manualClock } from '../helpers/fake-delivery-ports.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';

const HOUR = 3_600_000;
const basic = (password: string): AuthConfig => ({ method: 'basic', basic: { username: 'relay', password }, headers: [] });
const configWith = (auth: AuthConfig): RelayConfig => ({
  auth,
  destinations: { default: { url: 'https://hooks.slack.com/services/x' } },
  routes: [],
});
const header = (password: string) => ({ authorization: `Basic ${Buffer.from(`relay:${password}`).toString('base64')}` });

function setup(current: LoadedConfig, previous?: RelayConfig, graceMs = HOUR) {
  const clock = manualClock();
  const store = memoryConfigStore(current, previous);
  const log = capturedLogger();
  const authenticate = createRequestAuthenticator({ check: createAuthenticator(), store, graceMs, now: clock.now });
  const run = async (headers: Record<string, string>) => (await authenticate(headers, current, log.logger)).outcome;
  return { clock, store, log, run, authenticate };
}

describe('authentication of one request, end to end', () => {
  it('accepts the current credentials without reading anything more', async () => {
    const { run, store } = setup({ config: configWith(basic('new-pass')) });
    expect(await run(header('new-pass'))).toEqual({ kind: 'accepted', via: 'basic' });
    expect(store.reads).toEqual({ current: 0, refresh: 0, previous: 0 });
  });

  it('decides accepted Basic credentials at once; SSO is asked once per request, and waited for', async () => {
    const current: LoadedConfig = { config: configWith(basic('new-pass')) };
    const { authenticate, log } = setup(current);
    expect(authenticate(header('new-pass'), current, log.logger)).toEqual({ outcome: { kind: 'accepted', via: 'basic' }, loaded: current });
    // A denial may still read the configuration again: that is waited for.
    expect(authenticate(header('wrong'), current, log.logger)).toBeInstanceOf(Promise);

    let verifications = 0;
    const sso = createRequestAuthenticator({
      check: createAuthenticator(async () => {
        verifications++;
        return { kind: 'accepted', via: 'sso' };
      }),
      store: memoryConfigStore(current),
      graceMs: HOUR,
      now: manualClock().now,
    });
    const ssoConfig: LoadedConfig = {
      config: configWith({
        method: 'sso',
        sso: { issuer: 'https://idp.example.com', clientId: 'c', scope: 's' },
        headers: [],
      } as AuthConfig),
    };
    const deciding = sso({ authorization: 'Bearer x' }, ssoConfig, log.logger);
    expect(deciding).toBeInstanceOf(Promise);
    expect((await deciding).outcome).toEqual({ kind: 'accepted', via: 'sso' });
    expect(verifications).toBe(1);
  });

  it('accepts the previous password during the grace, with a warning that never holds it', async () => {
    const { run, clock, log } = setup(
      { config: configWith(basic('new-pass')), currentSince: new Date(manualClock().now()) },
      configWith(basic('old-pass')),
    );
    expect(await run(header('old-pass'))).toEqual({ kind: 'accepted', via: 'basic', previousCredentials: true });
    expect(log.records()).toContainEqual(expect.objectContaining({ level: 'warn', via: 'basic', graceEndsAt: expect.any(String) }));
    clock.advance(HOUR);
    expect(await run(header('old-pass'))).toMatchObject({ kind: 'denied', reason: 'wrong_basic' });
    expect(log.lines.join('\n')).not.toContain('old-pass');
  });

  it('without a creation date (a local file) there is no grace', async () => {
    const { run, store } = setup({ config: configWith(basic('new-pass')) }, configWith(basic('old-pass')));
    expect(await run(header('old-pass'))).toMatchObject({ kind: 'denied' });
    expect(store.reads.previous).toBe(0);
  });

  it('re-reads the configuration on a denial, and decides with what it read', async () => {
    const first: LoadedConfig = { config: configWith(basic('old-pass')) };
    const { store, authenticate, log } = setup(first);
    store.set({ config: configWith(basic('rotated')) });
    const decision = await authenticate(header('rotated'), first, log.logger);
    expect(decision.outcome).toEqual({ kind: 'accepted', via: 'basic' });
    expect(decision.loaded.config.auth).toEqual(basic('rotated'));
  });

  it('keeps the refusal when the re-read fails', async () => {
    const first: LoadedConfig = { config: configWith(basic('pass')) };
    const { store, authenticate, log } = setup(first);
    store.set(new Error('throttled'));
    const decision = await authenticate(header('wrong'), first, log.logger);
    expect(decision.outcome).toMatchObject({ kind: 'denied', reason: 'wrong_basic', challenge: 'Basic realm="cost-alert-relay"' });
    expect(decision.loaded).toBe(first);
  });
});
