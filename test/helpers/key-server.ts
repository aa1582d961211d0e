import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import { closeServer } from './loopback-server.js';

export type KeyServerBehaviour = 'ok' | 'fail' | 'hang' | 'hang_keys';

/**
 * A loopback identity provider's public face: the OpenID discovery document and the JWKS,
 * the only two things a resource server downloads. Counts every download.
 */
export interface KeyServer {
  /** With a path, as Okta's and Entra's issuers have. */
  issuer: string;
  discoveryRequests(): number;
  jwksRequests(): number;
  /** The key set it publishes from now on. */
  publish(keys: JWK[]): void;
  /** `fail` answers 500, `hang` never answers, `hang_keys` answers discovery but not the key set. */
  setBehaviour(behaviour: KeyServerBehaviour): void;
  /** Override fields of the discovery document (for example a different issuer). */
  setDiscovery(overrides: Record<string, unknown>): void;
  close(): Promise<void>;
}

export async function startKeyServer(path = '/oauth2/default'): Promise<KeyServer> {
  let keys: JWK[] = [];
  let behaviour: KeyServerBehaviour = 'ok';
  let overrides: Record<string, unknown> = {};
  let discovery = 0;
  let jwks = 0;
  const hanging = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const isDiscovery = url === `${path}/.well-known/openid-configuration`;
    const isJwks = url === `${path}/v1/keys`;
    if (isDiscovery) discovery++;
    if (isJwks) jwks++;
    if (behaviour === 'hang' || (behaviour === 'hang_keys' && isJwks)) {
      hanging.add(res);
      return;
    }
    if (behaviour === 'fail') return res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (isDiscovery)
      return json({ issuer, jwks_uri: `${origin}${path}/v1/keys`, token_endpoint: `${origin}${path}/v1/token`, ...overrides });
    if (isJwks) return json({ keys });
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}${path}`;

  return {
    issuer,
    discoveryRequests: () => discovery,
    jwksRequests: () => jwks,
    publish: (next) => {
      keys = next;
    },
    setBehaviour: (next) => {
      behaviour = next;
    },
    setDiscovery: (next) => {
      overrides = next;
    },
    close: () => closeServer(server, hanging),
  };
}

export interface SigningKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

export async function createSigningKey(alg: 'RS256' | 'ES256' | 'PS256' | 'ES384' | 'EdDSA', kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** Signs claims as an identity provider would; `iat`/`exp` default to now and one hour on. */
export function signToken(key: SigningKey, claims: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 3600, ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...header })
    .sign(key.privateKey);
}
