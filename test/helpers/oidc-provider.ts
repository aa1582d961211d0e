import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { createSigningKey, type SigningKey } from './key-server.js';
import { closeServer } from './loopback-server.js';

export interface OidcClient {
  clientId: string;
  clientSecret: string;
}

/** A real OpenID Connect provider (the `oidc-provider` package) on loopback, with the client-credentials grant. */
export interface LoopbackProvider {
  issuer: string;
  /** The key it signs access tokens with, for tests that forge tokens "in its name". */
  signingKey: SigningKey;
  /** An access token (a JWT) from the token endpoint, as the cost platform would obtain one. */
  token(client: OidcClient, scope: string): Promise<string>;
  discoveryRequests(): number;
  jwksRequests(): number;
  close(): Promise<void>;
}

export const RESOURCE = 'https://relay.example.com/webhook';

type Payload = Record<string, unknown> & { grantId?: string; uid?: string; userCode?: string };

/**
 * The provider's storage (oidc-provider's adapter interface), in memory and private to one
 * provider: it lives as long as the test that started it. Giving it explicitly is what the
 * package asks of anything but a quick start, and it then has no warning to print.
 */
function memoryAdapter() {
  const items = new Map<string, Payload>();
  return (model: string) => {
    const key = (id: string) => `${model}:${id}`;
    const findBy = (field: 'uid' | 'userCode', value: string) =>
      [...items.entries()].find(([k, p]) => k.startsWith(`${model}:`) && p[field] === value)?.[1];
    return {
      async upsert(id: string, payload: Payload) {
        items.set(key(id), payload);
      },
      async find(id: string) {
        return items.get(key(id));
      },
      async findByUid(uid: string) {
        return findBy('uid', uid);
      },
      async findByUserCode(userCode: string) {
        return findBy('userCode', userCode);
      },
      async consume(id: string) {
        const payload = items.get(key(id));
        if (payload) payload['consumed'] = Math.floor(Date.now() / 1000);
      },
      async destroy(id: string) {
        items.delete(key(id));
      },
      async revokeByGrantId(grantId: string) {
        for (const [k, p] of items) if (p.grantId === grantId) items.delete(k);
      },
    };
  };
}

export async function startOidcProvider(clients: OidcClient[], scopes: string[]): Promise<LoopbackProvider> {
  const signingKey = await createSigningKey('RS256', 'provider-key-1');
  const { exportJWK } = await import('jose');
  const privateJwk = { ...(await exportJWK(signingKey.privateKey)), kid: signingKey.kid, alg: 'RS256', use: 'sig' };

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider = new Provider(issuer, {
    adapter: memoryAdapter(),
    jwks: { keys: [privateJwk] },
    clients: clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
    })),
    scopes,
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // Access tokens as signed JWTs for one resource server: the relay.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: scopes.join(' '), audience: RESOURCE, accessTokenFormat: 'jwt' }),
      },
    },
    ttl: { ClientCredentials: 600 },
  });
  let discovery = 0;
  let jwks = 0;
  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (req.url === '/.well-known/openid-configuration') discovery++;
    if (req.url === '/jwks') jwks++;
    callback(req, res);
  });

  return {
    issuer,
    signingKey,
    async token(client, scope) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
        },
        body: new URLSearchParams({ grant_type: 'client_credentials', scope }).toString(),
      });
      const body = (await response.json()) as { access_token?: string };
      if (response.status !== 200 || !body.access_token) throw new Error(`token endpoint answered ${response.status}`);
      return body.access_token;
    },
    discoveryRequests: () => discovery,
    jwksRequests: () => jwks,
    close: () => closeServer(server),
  };
}
