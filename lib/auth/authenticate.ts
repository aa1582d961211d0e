import type { AuthConfig } from '../config/schema.js';
import { basicCredentialsMatch, parseBasicAuthorization } from './basic.js';
import { customHeadersMatch, headerValue } from './headers.js';
import type { PreviousCredentials } from './previous-credentials.js';

export const BASIC_CHALLENGE = 'Basic realm="cost-alert-relay"';
/** RFC 6750 section 3.1; the same for every SSO failure so that the answer does not say which check failed. */
export const BEARER_CHALLENGE = 'Bearer error="invalid_token"';

export type AuthOutcome =
  | { kind: 'accepted'; via: 'none' | 'basic' | 'sso'; previousCredentials?: boolean }
  /** `reason` is for the log only; the answer never says which check failed. */
  | { kind: 'denied'; reason: string; challenge?: string }
  | { kind: 'unavailable'; reason: string };

/**
 * Checks headers against one `auth` block; `previous` adds the old values that grace still
 * accepts. None and Basic decide at once; only SSO may have to ask the identity provider.
 */
export type Authenticator = (
  headers: Record<string, string>,
  auth: AuthConfig,
  previous?: PreviousCredentials,
) => AuthOutcome | Promise<AuthOutcome>;

/**
 * Checks a delivery against the configuration. SSO is verified by `ssoVerifier` when one is
 * wired in; without one, SSO cannot be checked and the relay answers 503 rather than let an
 * unverified request through.
 */
export function createAuthenticator(
  ssoVerifier?: (authorization: string | undefined, auth: AuthConfig) => Promise<AuthOutcome>,
): Authenticator {
  const verifySso = async (authorization: string | undefined, auth: AuthConfig, headersOk: boolean): Promise<AuthOutcome> => {
    if (!ssoVerifier) return { kind: 'unavailable', reason: 'sso_not_supported' };
    const outcome = await ssoVerifier(authorization, auth);
    if (outcome.kind === 'accepted' && !headersOk) return { kind: 'denied', reason: 'wrong_header', challenge: BEARER_CHALLENGE };
    return outcome;
  };

  return (headers, auth, previous) => {
    const headersOk = customHeadersMatch(headers, auth.headers, previous?.headers);
    const authorization = headerValue(headers, 'authorization');
    switch (auth.method) {
      case 'none':
        return headersOk ? { kind: 'accepted', via: 'none' } : { kind: 'denied', reason: 'wrong_header' };
      case 'basic': {
        const supplied = parseBasicAuthorization(authorization);
        const matchesEither = (expected: AuthConfig['basic']) =>
          supplied !== undefined && expected !== undefined && basicCredentialsMatch(supplied, expected);
        const credentialsOk = matchesEither(auth.basic) || matchesEither(previous?.basic);
        if (credentialsOk && headersOk) return { kind: 'accepted', via: 'basic' };
        return {
          kind: 'denied',
          reason: !supplied ? 'missing_basic' : !credentialsOk ? 'wrong_basic' : 'wrong_header',
          challenge: BASIC_CHALLENGE,
        };
      }
      case 'sso':
        return verifySso(authorization, auth, headersOk);
    }
  };
}
