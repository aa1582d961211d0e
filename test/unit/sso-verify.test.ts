import { base64url, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createAuthenticator } from '../../lib/auth/authenticate.js';
import { createSsoVerifier, type SsoVerifierOptions } from '../../lib/auth/sso/verify.js';
import { lazySsoVerifier } from '../../lib/auth/sso-verifier.js';
import type { AuthConfig } from '../../lib/config/schema.js';
import { createSigningKey, type KeyServer, type SigningKey, signToken, startKeyServer } from '../helpers/key-server.js';
import { freePort } from '../helpers/ports.js';

// Lib level: the verifier against a loopback key server (discovery + JWKS over HTTP), with
// claim sets as Okta and Entra ID issue them. Through the built bundle: test/integration/sso-relay.test.ts.

const CLIENT = '0oa1platformclient';
const SCOPE = 'cost-alerts';

let server: KeyServer;
let rsa: SigningKey;
let ec: SigningKey;

const ssoAuth = (overrides: Partial<NonNullable<AuthConfig['sso']>> = {}): AuthConfig => ({
  method: 'sso',
  sso: { issuer: server.issuer, clientId: CLIENT, scope: SCOPE, ...overrides },
  headers: [],
});

const bearer = (token: string) => `Bearer ${token}`;
const okta = (claims: Record<string, unknown> = {}) => ({
  iss: server.issuer,
  cid: CLIENT,
  scp: [SCOPE],
  sub: CLIENT,
  aud: 'api://default',
  ...claims,
});
const entra = (claims: Record<string, unknown> = {}) => ({
  iss: server.issuer,
  appid: CLIENT,
  scp: `openid ${SCOPE}`,
  aud: 'api://relay',
  ...claims,
});

beforeAll(async () => {
  server = await startKeyServer();
  rsa = await createSigningKey('RS256', 'rsa-1');
  ec = await createSigningKey('ES256', 'ec-1');
});
afterAll(() => server.close());
beforeEach(() => {
  server.publish([rsa.publicJwk, ec.publicJwk]);
  server.setBehaviour('ok');
  server.setDiscovery({});
});

const verifier = (options: SsoVerifierOptions = {}) => createSsoVerifier(options);

describe('SSO verification: claim sets of real identity providers', () => {
  it.each([
    ['Okta-style (cid, scp array), RSA', () => signToken(rsa, okta())],
    ['Okta-style (cid, scp array), EC', () => signToken(ec, okta())],
    ['Entra-style (appid, scp string), RSA', () => signToken(rsa, entra())],
    ['Entra-style (appid, scp string), EC', () => signToken(ec, entra())],
    ['client_id and space-separated scope', () => signToken(rsa, { iss: server.issuer, client_id: CLIENT, scope: `read ${SCOPE}` })],
    ['azp', () => signToken(ec, { iss: server.issuer, azp: CLIENT, scp: SCOPE })],
  ])('accepts %s', async (_name, make) => {
    const outcome = await verifier()(bearer(await make()), ssoAuth());
    expect(outcome).toEqual({ kind: 'accepted', via: 'sso' });
  });

  it('accepts the algorithms it allows for other key types too (PS256, ES384, EdDSA)', async () => {
    const keys = await Promise.all([createSigningKey('PS256', 'ps'), createSigningKey('ES384', 'es384'), createSigningKey('EdDSA', 'ed')]);
    server.publish(keys.map((k) => k.publicJwk));
    const verify = verifier();
    for (const key of keys) {
      expect(await verify(bearer(await signToken(key, okta())), ssoAuth())).toMatchObject({ kind: 'accepted' });
    }
  });

  it('a token without kid is tried against each key of the set that fits', async () => {
    const other = await createSigningKey('RS256', 'rsa-other');
    server.publish([other.publicJwk, rsa.publicJwk]);
    const verify = verifier();
    expect(await verify(bearer(await signToken(rsa, okta(), { kid: undefined })), ssoAuth())).toMatchObject({ kind: 'accepted' });
    const stranger = await createSigningKey('RS256', 'nobody');
    expect(await verify(bearer(await signToken(stranger, okta(), { kid: undefined })), ssoAuth())).toMatchObject({
      kind: 'denied',
      reason: 'bad_signature',
    });
  });

  it('checks the audience only when one is configured', async () => {
    const token = await signToken(rsa, okta({ aud: 'api://default' }));
    const verify = verifier();
    expect(await verify(bearer(token), ssoAuth())).toMatchObject({ kind: 'accepted' });
    expect(await verify(bearer(token), ssoAuth({ audience: 'api://default' }))).toMatchObject({ kind: 'accepted' });
    expect(await verify(bearer(token), ssoAuth({ audience: 'api://other' }))).toMatchObject({ kind: 'denied', reason: 'wrong_audience' });
  });

  it('requires every configured scope when several are configured', async () => {
    const verify = verifier();
    const both = await signToken(rsa, okta({ scp: [SCOPE, 'extra'] }));
    const one = await signToken(rsa, okta({ scp: [SCOPE] }));
    expect(await verify(bearer(both), ssoAuth({ scope: `${SCOPE} extra` }))).toMatchObject({ kind: 'accepted' });
    expect(await verify(bearer(one), ssoAuth({ scope: `${SCOPE} extra` }))).toMatchObject({ kind: 'denied', reason: 'missing_scope' });
  });

  it('tolerates up to 60 seconds of clock skew, not more', async () => {
    const now = Math.floor(Date.now() / 1000);
    const verify = verifier();
    const cases: Array<[Record<string, unknown>, string | undefined]> = [
      [{ exp: now - 50 }, undefined],
      [{ exp: now - 70 }, 'expired'],
      [{ nbf: now + 50 }, undefined],
      [{ nbf: now + 70 }, 'not_yet_valid'],
      [{ iat: now + 50 }, undefined],
      [{ iat: now + 70 }, 'not_yet_valid'],
    ];
    for (const [claims, reason] of cases) {
      const outcome = await verify(bearer(await signToken(rsa, okta(claims))), ssoAuth());
      expect(outcome, JSON.stringify(claims)).toMatchObject(reason ? { kind: 'denied', reason } : { kind: 'accepted' });
    }
  });

  it('uses the injected clock for expiry', async () => {
    const token = await signToken(rsa, okta());
    let now = Date.now();
    const verify = verifier({ now: () => now });
    expect(await verify(bearer(token), ssoAuth())).toMatchObject({ kind: 'accepted' });
    now += 2 * 3600_000;
    expect(await verify(bearer(token), ssoAuth())).toMatchObject({ kind: 'denied', reason: 'expired' });
  });
});

describe('SSO verification: hostile and broken tokens are refused with a reason code for the log', () => {
  const encode = (value: unknown) => base64url.encode(JSON.stringify(value));

  const hostile: Array<[string, () => Promise<string>, string]> = [
    [
      'alg none',
      async () => `${encode({ alg: 'none', typ: 'JWT' })}.${encode(okta({ exp: Math.floor(Date.now() / 1000) + 600 }))}.`,
      'algorithm_not_allowed',
    ],
    [
      'HS256 signed with the public key as the secret',
      async () => {
        const { createPublicKey } = await import('node:crypto');
        const pem = createPublicKey({ key: rsa.publicJwk as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
        return new SignJWT(okta())
          .setProtectedHeader({ alg: 'HS256', kid: rsa.kid })
          .setIssuedAt()
          .setExpirationTime('1h')
          .sign(Buffer.from(pem));
      },
      'algorithm_not_allowed',
    ],
    ['expired', () => signToken(rsa, okta({ exp: Math.floor(Date.now() / 1000) - 3600 })), 'expired'],
    ['not yet valid', () => signToken(rsa, okta({ nbf: Math.floor(Date.now() / 1000) + 3600 })), 'not_yet_valid'],
    ['no exp at all', () => new SignJWT(okta()).setProtectedHeader({ alg: 'RS256', kid: rsa.kid }).sign(rsa.privateKey), 'missing_exp'],
    ['wrong issuer', () => signToken(rsa, okta({ iss: 'https://evil.example.com/oauth2/default' })), 'wrong_issuer'],
    ['wrong client', () => signToken(rsa, okta({ cid: 'someone-else' })), 'wrong_client'],
    ['client claims that disagree', () => signToken(rsa, okta({ client_id: 'someone-else' })), 'wrong_client'],
    ['no client claim', () => signToken(rsa, { iss: server.issuer, scp: [SCOPE] }), 'wrong_client'],
    ['missing scope', () => signToken(rsa, okta({ scp: ['openid', 'profile'] })), 'missing_scope'],
    [
      'scope that only contains the configured one as a substring',
      () => signToken(rsa, okta({ scp: undefined, scope: 'cost-alerts-admin' })),
      'missing_scope',
    ],
    ['unknown kid', async () => signToken(await createSigningKey('RS256', 'attacker-key'), okta()), 'unknown_key'],
    [
      'known kid, signed by another key',
      async () => signToken({ ...(await createSigningKey('RS256', 'x')), kid: rsa.kid }, okta()),
      'bad_signature',
    ],
    [
      'tampered payload',
      async () => {
        const [header, , signature] = (await signToken(rsa, okta({ scp: ['read'] }))).split('.');
        return `${header}.${encode(okta())}.${signature}`;
      },
      'bad_signature',
    ],
    ['truncated', async () => (await signToken(rsa, okta())).slice(0, -20), 'bad_signature'],
    ['garbage', async () => 'eyJhbGciOi.bm90LWpzb24.c2ln', 'malformed'],
  ];

  it.each(hostile)('%s', async (_name, make, reason) => {
    const outcome = await verifier()(bearer(await make()), ssoAuth());
    expect(outcome).toEqual({ kind: 'denied', reason, challenge: 'Bearer error="invalid_token"' });
  });

  it.each([
    ['no Authorization header', undefined, 'missing_token'],
    ['Basic instead of Bearer', `Basic ${Buffer.from(`${CLIENT}:secret`).toString('base64')}`, 'missing_token'],
    ['not a JWT', 'Bearer not-a-token', 'malformed'],
    ['an oversized token', `Bearer ${'a'.repeat(20_000)}.b.c`, 'malformed'],
  ])('%s', async (_name, header, reason) => {
    expect(await verifier()(header, ssoAuth())).toEqual({ kind: 'denied', reason, challenge: 'Bearer error="invalid_token"' });
  });

  it('two Authorization headers, joined with a comma by API Gateway', async () => {
    const token = await signToken(rsa, okta());
    const outcome = await verifier()(`${bearer(token)},${bearer(token)}`, ssoAuth());
    expect(outcome).toMatchObject({ kind: 'denied', reason: 'malformed' });
  });

  it('refuses hostile tokens without asking the identity provider', async () => {
    const before = server.discoveryRequests() + server.jwksRequests();
    const verify = verifier();
    for (const [, make] of hostile.slice(0, 2)) await verify(bearer(await make()), ssoAuth());
    await verify('Bearer not-a-token', ssoAuth());
    expect(server.discoveryRequests() + server.jwksRequests()).toBe(before);
  });

  it('a valid token with a wrong custom header gets the same challenge', async () => {
    const authenticate = createAuthenticator(verifier());
    const auth: AuthConfig = { ...ssoAuth(), headers: [{ key: 'X-Channel-Token', value: 'right' }] };
    const token = bearer(await signToken(rsa, okta()));
    expect(await authenticate({ authorization: token, 'x-channel-token': 'right' }, auth)).toMatchObject({ kind: 'accepted' });
    expect(await authenticate({ authorization: token, 'x-channel-token': 'wrong' }, auth)).toEqual({
      kind: 'denied',
      reason: 'wrong_header',
      challenge: 'Bearer error="invalid_token"',
    });
  });
});

describe('SSO keys: downloaded once, refreshed on an unknown key at most once per cooldown', () => {
  it('one discovery and one key download for many tokens', async () => {
    const fresh = await startKeyServer();
    fresh.publish([rsa.publicJwk]);
    try {
      const verify = verifier();
      const auth = ssoAuth({ issuer: fresh.issuer });
      const token = bearer(await signToken(rsa, okta({ iss: fresh.issuer })));
      // Concurrent first requests share one download.
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => verify(token, auth)));
      expect(outcomes.every((o) => o.kind === 'accepted')).toBe(true);
      for (let i = 0; i < 200; i++) await verify(token, auth);
      expect([fresh.discoveryRequests(), fresh.jwksRequests()]).toEqual([1, 1]);
    } finally {
      await fresh.close();
    }
  });

  it('accepts a token signed by a key the provider rotated to, after one key download', async () => {
    let now = Date.now();
    const verify = verifier({ now: () => now });
    const fresh = await startKeyServer();
    fresh.publish([rsa.publicJwk]);
    try {
      const auth = ssoAuth({ issuer: fresh.issuer });
      expect(await verify(bearer(await signToken(rsa, okta({ iss: fresh.issuer }))), auth)).toMatchObject({ kind: 'accepted' });
      expect(fresh.jwksRequests()).toBe(1);

      const next = await createSigningKey('RS256', 'rsa-2');
      fresh.publish([rsa.publicJwk, next.publicJwk]);
      now += 31_000;
      const rotated = bearer(await signToken(next, okta({ iss: fresh.issuer })));
      expect(await verify(rotated, auth)).toMatchObject({ kind: 'accepted' });
      expect(await verify(rotated, auth)).toMatchObject({ kind: 'accepted' });
      expect([fresh.discoveryRequests(), fresh.jwksRequests()]).toEqual([1, 2]);
    } finally {
      await fresh.close();
    }
  });

  it('a flood of unknown kids causes at most one key download per 30 s', async () => {
    let now = Date.now();
    const verify = verifier({ now: () => now });
    const fresh = await startKeyServer();
    fresh.publish([rsa.publicJwk]);
    try {
      const auth = ssoAuth({ issuer: fresh.issuer });
      await verify(bearer(await signToken(rsa, okta({ iss: fresh.issuer }))), auth);
      const stranger = bearer(await signToken(await createSigningKey('RS256', 'stranger'), okta({ iss: fresh.issuer })));
      now += 31_000;
      const flood = await Promise.all(Array.from({ length: 100 }, () => verify(stranger, auth)));
      expect(flood.every((o) => o.kind === 'denied' && o.reason === 'unknown_key')).toBe(true);
      now += 10_000;
      for (let i = 0; i < 100; i++) await verify(stranger, auth);
      expect(fresh.jwksRequests()).toBe(2);
      now += 21_000;
      await verify(stranger, auth);
      expect(fresh.jwksRequests()).toBe(3);
      // The cached keys keep working throughout.
      expect(await verify(bearer(await signToken(rsa, okta({ iss: fresh.issuer }))), auth)).toMatchObject({ kind: 'accepted' });
    } finally {
      await fresh.close();
    }
  });
});

describe('SSO: an identity provider that cannot be asked means 503, not 401', () => {
  it('unreachable issuer', async () => {
    const issuer = `http://127.0.0.1:${await freePort()}/oauth2/default`;
    const token = await signToken(rsa, okta({ iss: issuer }));
    const outcome = await verifier()(bearer(token), ssoAuth({ issuer }));
    expect(outcome).toEqual({ kind: 'unavailable', reason: 'discovery_unreachable' });
  });

  it('discovery answering 500', async () => {
    server.setBehaviour('fail');
    const outcome = await verifier()(bearer(await signToken(rsa, okta())), ssoAuth());
    expect(outcome).toEqual({ kind: 'unavailable', reason: 'discovery_http_500' });
  });

  it('a hanging provider is given up on within the timeout', async () => {
    server.setBehaviour('hang');
    const started = Date.now();
    const outcome = await verifier({ timeoutMs: 300 })(bearer(await signToken(rsa, okta())), ssoAuth());
    expect(outcome).toEqual({ kind: 'unavailable', reason: 'discovery_timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('a key download that hangs after a good discovery is given up on within the timeout', async () => {
    const fresh = await startKeyServer();
    try {
      fresh.setBehaviour('hang_keys');
      const started = Date.now();
      const outcome = await verifier({ timeoutMs: 300 })(
        bearer(await signToken(rsa, okta({ iss: fresh.issuer }))),
        ssoAuth({ issuer: fresh.issuer }),
      );
      expect(outcome).toEqual({ kind: 'unavailable', reason: 'jwks_timeout' });
      expect(Date.now() - started).toBeLessThan(2_000);
      expect([fresh.discoveryRequests(), fresh.jwksRequests()]).toEqual([1, 1]);
    } finally {
      await fresh.close();
    }
  });

  it('a key URL that answers 404', async () => {
    server.setDiscovery({ jwks_uri: `${server.issuer}/v1/no-such-keys` });
    const outcome = await verifier()(bearer(await signToken(rsa, okta())), ssoAuth());
    expect(outcome).toEqual({ kind: 'unavailable', reason: 'jwks_http_404' });
  });

  it('a discovery document naming another issuer is not trusted', async () => {
    server.setDiscovery({ issuer: 'https://other.example.com' });
    const outcome = await verifier()(bearer(await signToken(rsa, okta())), ssoAuth());
    expect(outcome).toEqual({ kind: 'unavailable', reason: 'discovery_issuer_mismatch' });
  });

  it('a discovery document without a string issuer or key URL is unavailable, not trusted', async () => {
    for (const broken of [{ jwks_uri: 42 }, { issuer: null }, { jwks_uri: ['https://keys.example.com'] }]) {
      server.setDiscovery(broken);
      const outcome = await verifier()(bearer(await signToken(rsa, okta())), ssoAuth());
      expect(outcome).toEqual({ kind: 'unavailable', reason: 'discovery_invalid' });
    }
  });

  it('a key URL that is plain http to a remote host is refused', async () => {
    server.setDiscovery({ jwks_uri: 'http://keys.example.com/jwks' });
    const outcome = await verifier()(bearer(await signToken(rsa, okta())), ssoAuth());
    expect(outcome).toEqual({ kind: 'unavailable', reason: 'discovery_jwks_uri_not_allowed' });
  });

  it('after a failure, waits before asking again, then recovers', async () => {
    let now = Date.now();
    const verify = verifier({ now: () => now });
    const fresh = await startKeyServer();
    fresh.publish([rsa.publicJwk]);
    try {
      const auth = ssoAuth({ issuer: fresh.issuer });
      const token = bearer(await signToken(rsa, okta({ iss: fresh.issuer })));
      fresh.setBehaviour('fail');
      for (let i = 0; i < 20; i++) expect(await verify(token, auth)).toMatchObject({ kind: 'unavailable' });
      expect(fresh.discoveryRequests()).toBe(1);
      fresh.setBehaviour('ok');
      now += 6_000;
      expect(await verify(token, auth)).toMatchObject({ kind: 'accepted' });
      expect([fresh.discoveryRequests(), fresh.jwksRequests()]).toEqual([2, 1]);
    } finally {
      await fresh.close();
    }
  });
});

describe('SSO keys: withdrawn keys stop working, new keys are found at once', () => {
  it('a key the provider withdraws is refused once the key set has passed its lifetime', async () => {
    let now = Date.now();
    const verify = verifier({ now: () => now, keysLifetimeMs: 3_600_000 });
    const fresh = await startKeyServer();
    const leaked = await createSigningKey('ES256', 'leaked');
    fresh.publish([rsa.publicJwk, leaked.publicJwk]);
    try {
      const auth = ssoAuth({ issuer: fresh.issuer });
      const token = bearer(await signToken(leaked, okta({ iss: fresh.issuer, exp: Math.floor(now / 1000) + 86_400 })));
      expect(await verify(token, auth)).toMatchObject({ kind: 'accepted' });
      fresh.publish([rsa.publicJwk]);
      now += 3_600_001;
      expect(await verify(token, auth)).toEqual({ kind: 'denied', reason: 'unknown_key', challenge: 'Bearer error="invalid_token"' });
      // The refresh for age, then one look-up for the kid now missing; asking again costs nothing.
      expect(fresh.jwksRequests()).toBe(3);
      expect(await verify(token, auth)).toMatchObject({ kind: 'denied', reason: 'unknown_key' });
      expect(fresh.jwksRequests()).toBe(3);
      // The keys still published keep working.
      expect(await verify(bearer(await signToken(rsa, okta({ iss: fresh.issuer, iat: Math.floor(now / 1000) }))), auth)).toMatchObject({
        kind: 'accepted',
      });
    } finally {
      await fresh.close();
    }
  });

  it('the relay’s verifier, its code loaded with the first token, keeps its key set for the lifetime it is given', async () => {
    let now = Date.now();
    const verify = lazySsoVerifier({ now: () => now, keysLifetimeMs: 600_000 });
    const fresh = await startKeyServer();
    fresh.publish([rsa.publicJwk]);
    try {
      const auth = ssoAuth({ issuer: fresh.issuer });
      const token = bearer(await signToken(rsa, okta({ iss: fresh.issuer, exp: Math.floor(now / 1000) + 86_400 })));
      // Concurrent first tokens share one verifier, and so one download.
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => verify(token, auth)));
      expect(outcomes.every((o) => o.kind === 'accepted')).toBe(true);
      expect(await verify('Bearer not-a-token', auth)).toMatchObject({ kind: 'denied', reason: 'malformed' });
      expect([fresh.discoveryRequests(), fresh.jwksRequests()]).toEqual([1, 1]);
      now += 600_001;
      expect(await verify(token, auth)).toMatchObject({ kind: 'accepted' });
      expect([fresh.discoveryRequests(), fresh.jwksRequests()]).toEqual([1, 2]);
    } finally {
      await fresh.close();
    }
  });

  it('a key the provider rotates to right after a cold start is looked up at once', async () => {
    const now = Date.now();
    const verify = verifier({ now: () => now });
    const fresh = await startKeyServer();
    fresh.publish([rsa.publicJwk]);
    try {
      const auth = ssoAuth({ issuer: fresh.issuer });
      expect(await verify(bearer(await signToken(rsa, okta({ iss: fresh.issuer }))), auth)).toMatchObject({ kind: 'accepted' });
      const next = await createSigningKey('RS256', 'rsa-next');
      fresh.publish([rsa.publicJwk, next.publicJwk]);
      // Same instant as the first download: no cooldown stands in the way of a kid never looked up.
      expect(await verify(bearer(await signToken(next, okta({ iss: fresh.issuer }))), auth)).toMatchObject({ kind: 'accepted' });
      expect(fresh.jwksRequests()).toBe(2);
    } finally {
      await fresh.close();
    }
  });

  it('a flood of different made-up kids causes only a few downloads', async () => {
    let now = Date.now();
    const verify = verifier({ now: () => now });
    const fresh = await startKeyServer();
    fresh.publish([rsa.publicJwk]);
    try {
      const auth = ssoAuth({ issuer: fresh.issuer });
      await verify(bearer(await signToken(rsa, okta({ iss: fresh.issuer }))), auth);
      const forger = await createSigningKey('RS256', 'forger');
      for (let i = 0; i < 60; i++) {
        const token = bearer(await signToken({ ...forger, kid: `bogus-${i}` }, okta({ iss: fresh.issuer })));
        expect(await verify(token, auth)).toMatchObject({ kind: 'denied', reason: 'unknown_key' });
        now += 500;
      }
      // 30 s of flood: a burst of 3, then one per 10 s.
      expect(fresh.jwksRequests()).toBeLessThanOrEqual(1 + 3 + 3);
    } finally {
      await fresh.close();
    }
  });

  it('accepts Entra ID app-only tokens: the scope granted as an app role, the client in azp', async () => {
    const verify = verifier();
    const appOnly = entra({ scp: undefined, appid: undefined, azp: CLIENT, roles: [SCOPE] });
    expect(await verify(bearer(await signToken(rsa, appOnly)), ssoAuth())).toEqual({ kind: 'accepted', via: 'sso' });
    expect(await verify(bearer(await signToken(rsa, { ...appOnly, roles: ['Other.Role'] })), ssoAuth())).toMatchObject({
      kind: 'denied',
      reason: 'missing_scope',
    });
  });
});

describe('SSO: no redirect is followed', () => {
  it('a discovery URL that redirects is refused, and the redirect target never hears from us', async () => {
    const { createServer } = await import('node:http');
    const hits: string[] = [];
    const target = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const redirecting = createServer((_req, res) =>
      res.writeHead(307, { location: `http://127.0.0.1:${(target.address() as { port: number }).port}/x` }).end(),
    );
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    try {
      const issuer = `http://127.0.0.1:${(redirecting.address() as { port: number }).port}/oauth2/default`;
      const outcome = await verifier()(bearer(await signToken(rsa, okta({ iss: issuer }))), ssoAuth({ issuer }));
      expect(outcome).toEqual({ kind: 'unavailable', reason: 'discovery_redirect_refused' });
      expect(hits).toEqual([]);
    } finally {
      await Promise.all([target, redirecting].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
    }
  });
});
