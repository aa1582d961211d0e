import { readFile } from 'node:fs/promises';
import { DescribeSecretCommand, UpdateSecretVersionStageCommand } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { previousCredentials } from '../../lib/auth/previous-credentials.js';
import { createRequestAuthenticator } from '../../lib/auth/request-authenticator.js';
import { createSsoVerifier } from '../../lib/auth/sso/verify.js';
import { awsJsonClient, SECRETS_MANAGER } from '../../lib/aws/json-client.js';
import { SECRETS_MANAGER_READ_LIMITS } from '../../lib/aws/limits.js';
import type { AuthConfig } from '../../lib/config/schema.js';
import { secretsManagerReader } from '../../lib/config/secrets-manager.js';
import { secretConfigSource } from '../../lib/config/source.js';
import { createRelayConfigStore } from '../../lib/config/store.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { fromHttpApiEvent } from '../../lib/inbound/api-gateway.js';
import { createLogger } from '../../lib/log/logger.js';
import { createChatServices } from '../../lib/notify/kinds.js';
import { createRelay, type Relay } from '../../lib/relay/relay.js';
import { sleep } from '../../lib/shared/sleep.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, putSecret, secretsClient } from '../helpers/aws.js';
import { budgetOf } from '../helpers/budget.js';
import { startBundle } from '../helpers/bundle.js';
import { createSigningKey, signToken, startKeyServer } from '../helpers/key-server.js';
import { memoryConfigStore } from '../helpers/memory-config-store.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const OLD_PASSWORD = 'old-password-7c2e91';
const NEW_PASSWORD = 'new-password-4b8d05';
const OLD_HEADER = 'old-header-value-a13f';
const NEW_HEADER = 'new-header-value-e92b';
const HOUR = 3600_000;

const basicHeader = (password: string, user = 'relay') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

describe('which credentials of the previous version stay accepted', () => {
  const basic = (password: string, headers: AuthConfig['headers'] = []): AuthConfig => ({
    method: 'basic',
    basic: { username: 'relay', password },
    headers,
  });
  const sso = (clientId: string, headers: AuthConfig['headers'] = []): AuthConfig => ({
    method: 'sso',
    sso: { issuer: 'https://idp.example.com', clientId, scope: 'cost-alerts' },
    headers,
  });
  const header = (value: string) => [{ key: 'X-Channel-Token', value }];

  it('a changed password and a changed header value, as they were', () => {
    expect(previousCredentials(basic(NEW_PASSWORD, header(NEW_HEADER)), basic(OLD_PASSWORD, header(OLD_HEADER)))).toEqual({
      basic: { username: 'relay', password: OLD_PASSWORD },
      headers: header(OLD_HEADER),
    });
  });

  it('header values under SSO; tokens are always checked against the current settings', () => {
    expect(previousCredentials(sso('new-client', header(NEW_HEADER)), sso('old-client', header(OLD_HEADER)))).toEqual({
      headers: header(OLD_HEADER),
    });
  });

  it('a method changed or a requirement added takes effect at once', () => {
    // Basic -> SSO: the old password is no credential for SSO.
    expect(previousCredentials(sso('client'), basic(OLD_PASSWORD))).toBeUndefined();
    // SSO -> Basic: a previous SSO version keeps no token valid.
    expect(previousCredentials(basic(NEW_PASSWORD), sso('old-client', header(OLD_HEADER)))).toBeUndefined();
    // Basic on top of a header-only relay: the header alone no longer passes.
    expect(previousCredentials(basic(NEW_PASSWORD, header(NEW_HEADER)), { method: 'none', headers: header(OLD_HEADER) })).toEqual({
      headers: header(OLD_HEADER),
    });
    // A header added as a second lock: nothing of the previous version stands in for it.
    expect(previousCredentials(basic(NEW_PASSWORD, header(NEW_HEADER)), basic(NEW_PASSWORD))).toEqual({
      basic: { username: 'relay', password: NEW_PASSWORD },
      headers: [],
    });
  });

  it('nothing from a version that demanded nothing', () => {
    expect(previousCredentials(basic(NEW_PASSWORD), { method: 'none', headers: [] })).toBeUndefined();
  });
});

describe('grace, end to end through the authenticator', () => {
  const authenticate = createAuthenticator();
  const basicAuth = (password: string, headers: AuthConfig['headers'] = []): AuthConfig => ({
    method: 'basic',
    basic: { username: 'relay', password },
    headers,
  });
  const lock = (value: string) => [{ key: 'X-Channel-Token', value }];
  const since = new Date('2026-11-01T00:00:00Z');
  const during = () => since.getTime() + 60_000;
  const run = async (current: AuthConfig, previous: AuthConfig, headers: Record<string, string>) => {
    const store = memoryConfigStore(
      { config: { auth: current, destinations: {}, routes: [] }, currentSince: since },
      { auth: previous, destinations: {}, routes: [] },
    );
    const check = createRequestAuthenticator({ check: authenticate, store, graceMs: HOUR, now: during });
    return (await check(headers, await store.current(), createLogger({ sink: () => {} }))).outcome;
  };

  it('switching Basic to SSO refuses the old password at once', async () => {
    const current: AuthConfig = { method: 'sso', sso: { issuer: 'https://idp.example.com', clientId: 'c', scope: 's' }, headers: [] };
    const outcome = await run(current, basicAuth(OLD_PASSWORD), { authorization: basicHeader(OLD_PASSWORD) });
    // Without a verifier SSO cannot be checked at all; what matters is that Basic does not get in.
    expect(outcome.kind).not.toBe('accepted');
  });

  it('a custom header added as a second lock is enforced at once', async () => {
    expect(
      await run(basicAuth(NEW_PASSWORD, lock(NEW_HEADER)), basicAuth(NEW_PASSWORD), { authorization: basicHeader(NEW_PASSWORD) }),
    ).toMatchObject({
      kind: 'denied',
      reason: 'wrong_header',
    });
  });

  it('Basic added on top of a header-only relay stops header-only requests at once', async () => {
    const outcome = await run(
      basicAuth(NEW_PASSWORD, lock(OLD_HEADER)),
      { method: 'none', headers: lock(OLD_HEADER) },
      { 'x-channel-token': OLD_HEADER },
    );
    expect(outcome).toMatchObject({ kind: 'denied', reason: 'missing_basic' });
  });

  it('a changed password and a changed header each accept the old value during the grace', async () => {
    const outcome = await run(basicAuth(NEW_PASSWORD, lock(NEW_HEADER)), basicAuth(OLD_PASSWORD, lock(OLD_HEADER)), {
      authorization: basicHeader(OLD_PASSWORD),
      'x-channel-token': NEW_HEADER,
    });
    expect(outcome).toEqual({ kind: 'accepted', via: 'basic', previousCredentials: true });
  });

  it('a configured header named like an Object property is compared as a string', async () => {
    const current = basicAuth(NEW_PASSWORD, [{ key: 'Constructor', value: NEW_HEADER }]);
    expect(await run(current, current, { authorization: basicHeader(NEW_PASSWORD) })).toMatchObject({
      kind: 'denied',
      reason: 'wrong_header',
    });
    expect(await run(current, current, { authorization: basicHeader(NEW_PASSWORD), constructor: NEW_HEADER })).toMatchObject({
      kind: 'accepted',
    });
  });
});

describe('SSO with a changed custom header value', () => {
  it('a valid token with the old header value passes during the grace only', async () => {
    const server = await startKeyServer();
    try {
      const key = await createSigningKey('ES256', 'k');
      server.publish([key.publicJwk]);
      const auth = (value: string): AuthConfig => ({
        method: 'sso',
        sso: { issuer: server.issuer, clientId: 'platform', scope: 'cost-alerts' },
        headers: [{ key: 'X-Channel-Token', value }],
      });
      const loaded = { config: { auth: auth(NEW_HEADER), destinations: {}, routes: [] }, currentSince: new Date('2026-11-01T00:00:00Z') };
      const store = memoryConfigStore(loaded, { auth: auth(OLD_HEADER), destinations: {}, routes: [] });
      let clock = 0;
      const authenticate = createRequestAuthenticator({
        check: createAuthenticator(createSsoVerifier()),
        store,
        graceMs: HOUR,
        now: () => clock,
      });
      const logger = createLogger({ sink: () => {} });
      const authenticateWithGrace = async (headers: Record<string, string>, iso: string) => {
        clock = Date.parse(iso);
        return (await authenticate(headers, loaded, logger)).outcome;
      };
      const token = `Bearer ${await signToken(key, { iss: server.issuer, cid: 'platform', scp: ['cost-alerts'] })}`;
      const at = (iso: string) => iso;
      const headers = { authorization: token, 'x-channel-token': OLD_HEADER };
      expect(await authenticateWithGrace(headers, at('2026-11-01T00:59:00Z'))).toEqual({
        kind: 'accepted',
        via: 'sso',
        previousCredentials: true,
      });
      expect(await authenticateWithGrace(headers, at('2026-11-01T01:00:00Z'))).toEqual({
        kind: 'denied',
        reason: 'wrong_header',
        challenge: 'Bearer error="invalid_token"',
      });
      // The old header does not rescue an invalid token.
      const forged = `Bearer ${await signToken(await createSigningKey('ES256', 'k'), { iss: server.issuer, cid: 'platform', scp: ['cost-alerts'] })}`;
      expect(
        await authenticateWithGrace({ authorization: forged, 'x-channel-token': OLD_HEADER }, at('2026-11-01T00:30:00Z')),
      ).toMatchObject({ kind: 'denied', reason: 'bad_signature' });
    } finally {
      await server.close();
    }
  });
});

const url = motoUrl();

describe.skipIf(!url)('the previous version against Secrets Manager (moto_server)', () => {
  let slack: FakeSlack;
  let alert: string;
  beforeAll(async () => {
    slack = await startFakeSlack();
    alert = await readFile(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8');
  });
  afterAll(() => slack.close());

  const config = (auth: Record<string, unknown>) => ({ auth, destinations: { default: { url: slack.url() } } });
  const event = (headers: Record<string, string>) =>
    httpApiEvent({ headers: { 'content-type': 'application/json', ...headers }, body: alert });

  /** The relay from lib/, on the real Secrets Manager reader, with a clock the test drives. */
  function relayOn(secretId: string, graceMs: number) {
    const clock = { now: Date.now() };
    const lines: string[] = [];
    const now = () => clock.now;
    const logger = createLogger({ sink: (line) => lines.push(line), clock: () => new Date(clock.now) });
    const source = secretConfigSource(
      secretsManagerReader(awsJsonClient(SECRETS_MANAGER, { limits: SECRETS_MANAGER_READ_LIMITS, env: awsEnvironment(url!) })),
      secretId,
      {
        onPreviousUnavailable: (reason) => logger.warn('previous version unavailable', { reason }),
      },
    );
    const store = createRelayConfigStore({ source, ttlSeconds: 300, logger, now });
    const relay: Relay = createRelay({
      config: store,
      authenticate: createRequestAuthenticator({ check: createAuthenticator(), store, graceMs, now }),
      first: createDelivery({ services: createChatServices(), postTimeoutMs: 2_000, logger, now, sleep }).first,
      logger,
      now,
    });
    const send = async (headers: Record<string, string>) => relay(fromHttpApiEvent(event(headers), 'test'), budgetOf(10_000));
    return { clock, lines, send };
  }

  it('accepts the old password right after the change, warns each time, and refuses it once the grace has passed', async () => {
    const client = secretsClient(url!);
    const name = await createSecret(client, config({ method: 'basic', basic: { username: 'relay', password: OLD_PASSWORD } }));
    await putSecret(client, name, config({ method: 'basic', basic: { username: 'relay', password: NEW_PASSWORD } }));
    const { clock, lines, send } = relayOn(name, HOUR);

    expect((await send({ authorization: basicHeader(OLD_PASSWORD) })).statusCode).toBe(200);
    expect((await send({ authorization: basicHeader(OLD_PASSWORD) })).statusCode).toBe(200);
    expect((await send({ authorization: basicHeader(NEW_PASSWORD) })).statusCode).toBe(200);
    const warnings = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r['level'] === 'warn');
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatchObject({ via: 'basic', message: expect.stringContaining('previous secret version') });
    expect(Date.parse(String(warnings[0]!['graceEndsAt']))).toBeGreaterThan(clock.now);

    clock.now += HOUR - 60_000;
    expect((await send({ authorization: basicHeader(OLD_PASSWORD) })).statusCode).toBe(200);

    clock.now += 2 * 60_000;
    const refused = await send({ authorization: basicHeader(OLD_PASSWORD) });
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Basic realm="cost-alert-relay"');
    expect((await send({ authorization: basicHeader(NEW_PASSWORD) })).statusCode).toBe(200);
    // A password that was never in the secret was refused throughout.
    expect((await send({ authorization: basicHeader('guessed-password') })).statusCode).toBe(401);

    const log = lines.join('\n');
    for (const secret of [OLD_PASSWORD, NEW_PASSWORD, 'guessed-password']) expect(log).not.toContain(secret);
  });

  it('accepts the old custom header value during the grace, not after', async () => {
    const client = secretsClient(url!);
    const name = await createSecret(client, config({ method: 'none', headers: [{ key: 'X-Channel-Token', value: OLD_HEADER }] }));
    await putSecret(client, name, config({ method: 'none', headers: [{ key: 'X-Channel-Token', value: NEW_HEADER }] }));
    const { clock, lines, send } = relayOn(name, HOUR);

    expect((await send({ 'x-channel-token': OLD_HEADER })).statusCode).toBe(200);
    expect((await send({ 'x-channel-token': NEW_HEADER })).statusCode).toBe(200);
    expect((await send({})).statusCode).toBe(401);
    clock.now += HOUR + 1_000;
    expect((await send({ 'x-channel-token': OLD_HEADER })).statusCode).toBe(401);
    expect((await send({ 'x-channel-token': NEW_HEADER })).statusCode).toBe(200);
    expect(lines.filter((l) => l.includes('"level":"warn"') && l.includes('previous secret version'))).toHaveLength(1);
    expect(lines.join('\n')).not.toContain(OLD_HEADER);
  });

  it('the grace ends, once the cached configuration expires, when the AWSPREVIOUS label is removed (as docs/operations.md advises after a leak)', async () => {
    const client = secretsClient(url!);
    const name = await createSecret(client, config({ method: 'basic', basic: { username: 'relay', password: OLD_PASSWORD } }));
    await putSecret(client, name, config({ method: 'basic', basic: { username: 'relay', password: NEW_PASSWORD } }));
    const { clock, send } = relayOn(name, HOUR);
    expect((await send({ authorization: basicHeader(OLD_PASSWORD) })).statusCode).toBe(200);

    const stages = (await client.send(new DescribeSecretCommand({ SecretId: name }))).VersionIdsToStages ?? {};
    const previousId = Object.keys(stages).find((id) => stages[id]?.includes('AWSPREVIOUS'));
    await client.send(
      new UpdateSecretVersionStageCommand({ SecretId: name, VersionStage: 'AWSPREVIOUS', RemoveFromVersionId: previousId }),
    );
    // Until the cached configuration expires, the container still holds the old pair.
    expect((await send({ authorization: basicHeader(OLD_PASSWORD) })).statusCode).toBe(200);
    clock.now += 301_000;
    expect((await send({ authorization: basicHeader(OLD_PASSWORD) })).statusCode).toBe(401);
    expect((await send({ authorization: basicHeader(NEW_PASSWORD) })).statusCode).toBe(200);
  });

  it('grants nothing when the previous version demanded nothing', async () => {
    const client = secretsClient(url!);
    const name = await createSecret(client, config({ method: 'none' }));
    await putSecret(client, name, config({ method: 'basic', basic: { username: 'relay', password: NEW_PASSWORD } }));
    const { send } = relayOn(name, HOUR);
    expect((await send({})).statusCode).toBe(401);
    expect((await send({ authorization: basicHeader(NEW_PASSWORD) })).statusCode).toBe(200);
  });

  it('a secret that was never changed has only its current credentials, and that is no reason to warn', async () => {
    const client = secretsClient(url!);
    const name = await createSecret(client, config({ method: 'basic', basic: { username: 'relay', password: NEW_PASSWORD } }));
    const { lines, send } = relayOn(name, HOUR);
    expect((await send({ authorization: basicHeader(OLD_PASSWORD) })).statusCode).toBe(401);
    expect((await send({ authorization: basicHeader(NEW_PASSWORD) })).statusCode).toBe(200);
    expect(lines.filter((l) => l.includes('"level":"warn"') && !l.includes('"message":"delivery"'))).toHaveLength(0);
  });

  describe('through the built bundle', () => {
    async function changedSecret(): Promise<string> {
      const client = secretsClient(url!);
      const name = await createSecret(client, config({ method: 'basic', basic: { username: 'relay', password: OLD_PASSWORD } }));
      await putSecret(client, name, config({ method: 'basic', basic: { username: 'relay', password: NEW_PASSWORD } }));
      return name;
    }

    it('the old password is still delivered right after a change, with a warning in the log', async () => {
      const relay = await startBundle('webhook-relay', { ...awsEnvironment(url!), RELAY_CONFIG_SECRET_ID: await changedSecret() });
      try {
        const old = await relay.invoke<{ statusCode: number }>(event({ authorization: basicHeader(OLD_PASSWORD) }));
        const current = await relay.invoke<{ statusCode: number }>(event({ authorization: basicHeader(NEW_PASSWORD) }));
        expect([old.statusCode, current.statusCode]).toEqual([200, 200]);
        const warnings = relay.logRecords().filter((r) => r['level'] === 'warn');
        expect(warnings).toHaveLength(1);
        expect(warnings[0]).toMatchObject({ message: expect.stringContaining('previous secret version'), via: 'basic' });
        // Default grace: 86,400 s after the current version was created.
        const endsIn = Date.parse(String(warnings[0]!['graceEndsAt'])) - Date.now();
        expect(endsIn).toBeGreaterThan(86_400_000 - 120_000);
        expect(endsIn).toBeLessThanOrEqual(86_400_000);
        expect(relay.output()).not.toContain(OLD_PASSWORD);
        expect(relay.output()).not.toContain(NEW_PASSWORD);
      } finally {
        await relay.stop();
      }
    });

    it('with RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS=0 the old password stops at once', async () => {
      const relay = await startBundle('webhook-relay', {
        ...awsEnvironment(url!),
        RELAY_CONFIG_SECRET_ID: await changedSecret(),
        RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS: '0',
      });
      try {
        const old = await relay.invoke<{ statusCode: number }>(event({ authorization: basicHeader(OLD_PASSWORD) }));
        const current = await relay.invoke<{ statusCode: number }>(event({ authorization: basicHeader(NEW_PASSWORD) }));
        expect([old.statusCode, current.statusCode]).toEqual([401, 200]);
        expect(relay.output()).not.toContain(OLD_PASSWORD);
      } finally {
        await relay.stop();
      }
    });
  });
});
