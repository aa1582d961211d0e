import { cp, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { base64url, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { createSigningKey, signToken } from '../helpers/key-server.js';
import { type LoopbackProvider, type OidcClient, startOidcProvider } from '../helpers/oidc-provider.js';
import { freePort } from '../helpers/ports.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

// The built bundle, as Lambda runs it, against a real OpenID Connect provider on loopback:
// the platform's client gets a token with the client-credentials grant and a custom scope,
// and the relay verifies it through discovery and the provider's JWKS over HTTP.

const root = fileURLToPath(new URL('../../', import.meta.url));
const SCOPE = 'cost-alerts';
const platform: OidcClient = { clientId: 'cost-platform', clientSecret: 'platform-client-secret-6f1d' };
const stranger: OidcClient = { clientId: 'another-app', clientSecret: 'another-client-secret-93ab' };

interface Answer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

let provider: LoopbackProvider;
let slack: FakeSlack;
let dir: string;
let alert: string;
const running: RunningBundle[] = [];

beforeAll(async () => {
  provider = await startOidcProvider([platform, stranger], [SCOPE, 'other']);
  slack = await startFakeSlack();
  dir = await mkdtemp(join(tmpdir(), 'sso-relay-'));
  alert = await readFile(new URL('../../events/anomaly-alert.json', import.meta.url), 'utf8');
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((b) => b.stop()));
  slack.reset();
});
afterAll(async () => {
  await provider.close();
  await slack.close();
  await rm(dir, { recursive: true, force: true });
});

/** `bundle`: a folder under dist/, or the absolute path of a copy of one. */
async function startRelay(issuer = provider.issuer, extra: Record<string, unknown> = {}, bundle = 'webhook-relay'): Promise<RunningBundle> {
  const file = join(dir, `config-${running.length}-${Date.now()}.json`);
  await writeFile(
    file,
    JSON.stringify({
      auth: { method: 'sso', sso: { issuer, clientId: platform.clientId, scope: SCOPE, ...extra } },
      destinations: { default: { url: slack.url() } },
    }),
  );
  const relay = await startBundle(bundle, { RELAY_CONFIG_SECRET_ID: `file:${file}` });
  running.push(relay);
  return relay;
}

/** The bundle runner ends an invocation at `timeoutMs`, as Lambda does: an answer is an answer in time. */
const deliver = (relay: RunningBundle, headers: Record<string, string>, timeoutMs?: number) =>
  relay.invoke<Answer>(
    httpApiEvent({ headers: { 'content-type': 'application/json', ...headers }, body: alert }),
    timeoutMs ? { timeoutMs } : {},
  );

describe('SSO through the built relay with a real OpenID Connect provider', () => {
  it('delivers with a valid client-credentials token', async () => {
    const relay = await startRelay();
    const token = await provider.token(platform, SCOPE);
    const answer = await deliver(relay, { authorization: `Bearer ${token}` });
    expect(answer.statusCode).toBe(200);
    expect(slack.accepted()).toHaveLength(1);
    expect(relay.output()).not.toContain(token);
  });

  it('refuses every hostile or broken token with 401 and a Bearer challenge, and says nothing about why', async () => {
    const relay = await startRelay();
    const good = await provider.token(platform, SCOPE);
    const now = Math.floor(Date.now() / 1000);
    const claims = { iss: provider.issuer, client_id: platform.clientId, scope: SCOPE, iat: now, exp: now + 600 };
    const key = provider.signingKey;
    const encode = (value: unknown) => base64url.encode(JSON.stringify(value));
    const [goodHeader, , goodSignature] = good.split('.');
    const { createPublicKey } = await import('node:crypto');
    const publicPem = createPublicKey({ key: key.publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });

    const hostile: Record<string, string> = {
      'alg none': `Bearer ${encode({ alg: 'none', typ: 'JWT' })}.${encode(claims)}.`,
      'HS256 with the public key as secret': `Bearer ${await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', kid: key.kid })
        .sign(Buffer.from(publicPem))}`,
      expired: `Bearer ${await signToken(key, { ...claims, iat: now - 7200, exp: now - 3600 })}`,
      'not yet valid': `Bearer ${await signToken(key, { ...claims, nbf: now + 3600 })}`,
      'wrong issuer': `Bearer ${await signToken(key, { ...claims, iss: 'https://idp.example.com' })}`,
      'wrong client (a real token of another app)': `Bearer ${await provider.token(stranger, SCOPE)}`,
      'missing scope (a real token without the custom scope)': `Bearer ${await provider.token(platform, 'other')}`,
      'unknown kid': `Bearer ${await signToken(await createSigningKey('RS256', 'not-the-providers'), claims)}`,
      'tampered payload': `Bearer ${goodHeader}.${encode({ ...claims, scope: `${SCOPE} admin`, exp: now + 86_400 })}.${goodSignature}`,
      truncated: `Bearer ${good.slice(0, good.length - 30)}`,
      garbage: 'Bearer !!not*a*token!!',
      'Basic instead of Bearer': `Basic ${Buffer.from(`${platform.clientId}:${platform.clientSecret}`).toString('base64')}`,
    };
    const answers: Record<string, unknown> = {};
    for (const [name, authorization] of Object.entries(hostile)) {
      const answer = await deliver(relay, { authorization });
      answers[name] = [answer.statusCode, answer.headers['www-authenticate'], JSON.parse(answer.body)];
    }
    // Two Authorization headers: API Gateway joins them with a comma.
    const twice = await relay.invoke<Answer>(
      httpApiEvent({
        headers: { 'content-type': 'application/json', Authorization: `Bearer ${good}`, authorization: `Bearer ${good}` },
        body: alert,
      }),
    );
    answers['two Authorization headers'] = [twice.statusCode, twice.headers['www-authenticate'], JSON.parse(twice.body)];

    const expected = [401, 'Bearer error="invalid_token"', { status: 401, error: 'unauthorized', message: 'Authentication failed.' }];
    for (const [name, answer] of Object.entries(answers)) expect(answer, name).toEqual(expected);
    expect(slack.requests).toHaveLength(0);

    // The log says why, by code, and never carries a token or a secret.
    const reasons = relay
      .logRecords()
      .filter((r) => r['message'] === 'delivery')
      .map((r) => r['reason']);
    expect(reasons).toEqual([
      'algorithm_not_allowed',
      'algorithm_not_allowed',
      'expired',
      'not_yet_valid',
      'wrong_issuer',
      'wrong_client',
      'missing_scope',
      'unknown_key',
      'bad_signature',
      'bad_signature',
      'malformed',
      'missing_token',
      'malformed',
    ]);
    const output = relay.output();
    for (const authorization of Object.values(hostile)) expect(output).not.toContain(authorization.split(' ')[1]!.slice(-40));
    expect(output).not.toContain(goodSignature);
    expect(output).not.toContain(platform.clientSecret);

    // And the valid token still works afterwards.
    expect((await deliver(relay, { authorization: `Bearer ${good}` })).statusCode).toBe(200);
  });

  it('answers 503 while its SSO code cannot be loaded, and loads it with the next delivery rather than stay broken', async () => {
    // SSO verification is a bundle of its own that the first delivery needing it loads.
    const copy = join(dir, 'webhook-relay');
    await cp(join(root, 'dist', 'webhook-relay'), copy, { recursive: true });
    const sso = join(copy, 'lazy-sso.mjs');
    await rename(sso, `${sso}.aside`);
    const relay = await startRelay(provider.issuer, {}, copy);
    const token = await provider.token(platform, SCOPE);
    const first = await deliver(relay, { authorization: `Bearer ${token}` });
    expect([first.statusCode, JSON.parse(first.body)]).toEqual([503, expect.objectContaining({ error: 'authentication_unavailable' })]);
    expect(relay.logRecords().find((r) => r['message'] === 'delivery')).toMatchObject({ status: 503, reason: 'sso_verifier_not_loaded' });
    expect(slack.accepted()).toHaveLength(0);

    await rename(`${sso}.aside`, sso);
    expect((await deliver(relay, { authorization: `Bearer ${token}` })).statusCode).toBe(200);
    expect(slack.accepted()).toHaveLength(1);
  });

  it('answers 503 when the issuer cannot be reached, within bounded time', async () => {
    const issuer = `http://127.0.0.1:${await freePort()}`;
    const relay = await startRelay(issuer);
    const now = Math.floor(Date.now() / 1000);
    const token = await signToken(provider.signingKey, { iss: issuer, client_id: platform.clientId, scope: SCOPE, exp: now + 600 });
    const answer = await deliver(relay, { authorization: `Bearer ${token}` }, 5_000);
    expect(answer.statusCode).toBe(503);
    expect(JSON.parse(answer.body)).toMatchObject({ error: 'authentication_unavailable' });
    const record = relay.logRecords().find((r) => r['message'] === 'delivery');
    expect(record).toMatchObject({ level: 'error', status: 503, reason: 'discovery_unreachable' });
    expect(relay.output()).not.toContain(token);
  });

  it('1,000 deliveries in one warm container download discovery and the keys exactly once', async () => {
    const discoveryBefore = provider.discoveryRequests();
    const jwksBefore = provider.jwksRequests();
    const relay = await startRelay();
    const tokens = await Promise.all(Array.from({ length: 5 }, () => provider.token(platform, SCOPE)));
    const statuses = new Map<number, number>();
    for (let i = 0; i < 1_000; i++) {
      const answer = await deliver(relay, { authorization: `Bearer ${tokens[i % tokens.length]}` });
      statuses.set(answer.statusCode, (statuses.get(answer.statusCode) ?? 0) + 1);
    }
    expect(Object.fromEntries(statuses)).toEqual({ 200: 1_000 });
    expect(slack.accepted()).toHaveLength(1_000);
    expect(provider.discoveryRequests() - discoveryBefore).toBe(1);
    expect(provider.jwksRequests() - jwksBefore).toBe(1);
  }, 120_000);
});
