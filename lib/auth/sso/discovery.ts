import { parseJson } from '../../shared/json.js';
import { isHttpsOrLoopbackUrl } from '../../transport/allowed-url.js';
import { fetchOverNodeHttp, RedirectRefusedError } from '../../transport/fetch-over-node-http.js';
import { isTimeout } from '../../transport/node-request.js';
import { IdentityProviderUnavailableError } from './errors.js';

/** The two fields the relay reads of a discovery document. */
interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
}

// Checked by hand rather than with zod: this code loads on its own with the first SSO token
// (lazy-sso.mjs), and zod would come along as a second copy of the one the cold path parsed.
const isDiscoveryDocument = (value: unknown): value is DiscoveryDocument =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Record<string, unknown>)['issuer'] === 'string' &&
  typeof (value as Record<string, unknown>)['jwks_uri'] === 'string';

/** OpenID Connect Discovery 1.0, section 4: a trailing slash of the issuer is not doubled. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

export function fetchFailureReason(prefix: string, error: unknown): string {
  if (error instanceof RedirectRefusedError) return `${prefix}_redirect_refused`;
  return isTimeout(error) ? `${prefix}_timeout` : `${prefix}_unreachable`;
}

/**
 * Reads the issuer's discovery document and returns its `jwks_uri`. The document must name
 * the configured issuer exactly (as the spec demands, so that one provider cannot vouch for
 * another), and the key URL must be https (plain http only on loopback), like every URL the
 * relay calls.
 */
export async function fetchJwksUri(issuer: string, timeoutMs: number): Promise<URL> {
  const body = await getJson(discoveryUrl(issuer), timeoutMs, 'discovery');
  if (!isDiscoveryDocument(body)) throw new IdentityProviderUnavailableError('discovery_invalid');
  if (body.issuer !== issuer) throw new IdentityProviderUnavailableError('discovery_issuer_mismatch');
  if (!isHttpsOrLoopbackUrl(body.jwks_uri)) throw new IdentityProviderUnavailableError('discovery_jwks_uri_not_allowed');
  return new URL(body.jwks_uri);
}

/**
 * GETs a JSON document from the identity provider within `timeoutMs`, over node:http(s) like
 * the Slack posts (the global fetch would load undici, tens of ms on a cold container).
 * Redirects are refused. Failures are reason codes prefixed with `prefix`.
 */
export async function getJson(url: string, timeoutMs: number, prefix: string): Promise<unknown> {
  let text: string;
  try {
    const response = await fetchOverNodeHttp(url, {
      method: 'GET',
      headers: { accept: 'application/json' },
      timeoutMs,
    });
    if (response.status !== 200) throw new IdentityProviderUnavailableError(`${prefix}_http_${response.status}`);
    text = await response.text();
  } catch (error) {
    if (error instanceof IdentityProviderUnavailableError) throw error;
    throw new IdentityProviderUnavailableError(fetchFailureReason(prefix, error));
  }
  const json = parseJson(text);
  if (!json.ok) throw new IdentityProviderUnavailableError(`${prefix}_invalid`);
  return json.value;
}
