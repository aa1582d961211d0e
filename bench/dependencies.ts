// Loopback stand-ins that count what the relay asks of its dependencies.
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from '../test/helpers/loopback-server.js';

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

const close = (server: Server): Promise<void> => closeServer(server);

/** Counting stand-in for moto_server: the tests' AWS proxy, with no faults injected. */
export { startAwsProxy as startCountingProxy, type AwsProxy as CountingProxy } from '../test/helpers/aws-proxy.js';

export interface KeyServer {
  /** The issuer to configure as `auth.sso.issuer`. */
  issuer: string;
  discoveryDownloads(): number;
  keyDownloads(): number;
  reset(): void;
  /** An RS256 access token in the shape an Okta client-credentials grant issues. */
  token(claims: { clientId: string; scope: string; lifetimeSeconds?: number }): string;
  close(): Promise<void>;
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** An identity provider's discovery document and JWKS on loopback, with download counters. */
export async function startKeyServer(): Promise<KeyServer> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' });
  const kid = createHash('sha256').update(String(jwk.n)).digest('base64url').slice(0, 16);
  let discovery = 0;
  let keys = 0;
  let issuer = '';
  const { server, origin } = await listen((req, res) => {
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.url === '/oauth2/bench/.well-known/openid-configuration') {
      discovery += 1;
      return json({ issuer, jwks_uri: `${issuer}/v1/keys`, token_endpoint: `${issuer}/v1/token` });
    }
    if (req.url === '/oauth2/bench/v1/keys') {
      keys += 1;
      return json({ keys: [{ ...jwk, kid, alg: 'RS256', use: 'sig' }] });
    }
    res.writeHead(404).end();
  });
  issuer = `${origin}/oauth2/bench`;
  return {
    issuer,
    discoveryDownloads: () => discovery,
    keyDownloads: () => keys,
    reset: () => {
      discovery = 0;
      keys = 0;
    },
    token: ({ clientId, scope, lifetimeSeconds = 3600 }) => {
      const now = Math.floor(Date.now() / 1000);
      const header = base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }));
      const payload = base64url(
        JSON.stringify({ iss: issuer, sub: clientId, cid: clientId, scp: [scope], iat: now, nbf: now, exp: now + lifetimeSeconds, jti: kid + now }),
      );
      const signature = sign('sha256', Buffer.from(`${header}.${payload}`), privateKey);
      return `${header}.${payload}.${base64url(signature)}`;
    },
    close: () => close(server),
  };
}
