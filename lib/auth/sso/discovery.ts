import * as z from 'zod/mini';
import { isAllowedEndpoint } from '../../config/schema.js';
import { IdentityProviderUnavailableError } from './errors.js';

const discoveryDocumentSchema = z.object({ issuer: z.string(), jwks_uri: z.string() });

/** OpenID Connect Discovery 1.0, section 4: a trailing slash of the issuer is not doubled. */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

export function fetchFailureReason(prefix: string, error: unknown): string {
  const name = error instanceof Error ? error.name : '';
  return name === 'TimeoutError' || name === 'AbortError' ? `${prefix}_timeout` : `${prefix}_unreachable`;
}

/**
 * Reads the issuer's discovery document and returns its `jwks_uri`. The document must name
 * the configured issuer exactly (as the spec demands, so that one provider cannot vouch for
 * another), and the key URL must be https (plain http only on loopback), like every URL the
 * relay calls.
 */
export async function fetchJwksUri(issuer: string, timeoutMs: number): Promise<URL> {
  let response: Response;
  let body: unknown;
  try {
    response = await fetch(discoveryUrl(issuer), {
      redirect: 'manual',
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new IdentityProviderUnavailableError(`discovery_http_${response.status}`);
    }
    body = await response.json().catch((error: unknown) => {
      throw error instanceof Error && error.name === 'SyntaxError' ? new IdentityProviderUnavailableError('discovery_invalid') : error;
    });
  } catch (error) {
    if (error instanceof IdentityProviderUnavailableError) throw error;
    throw new IdentityProviderUnavailableError(fetchFailureReason('discovery', error));
  }
  const document = discoveryDocumentSchema.safeParse(body);
  if (!document.success) throw new IdentityProviderUnavailableError('discovery_invalid');
  if (document.data.issuer !== issuer) throw new IdentityProviderUnavailableError('discovery_issuer_mismatch');
  if (!isAllowedEndpoint(document.data.jwks_uri)) throw new IdentityProviderUnavailableError('discovery_jwks_uri_not_allowed');
  return new URL(document.data.jwks_uri);
}
