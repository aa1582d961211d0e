import type { CryptoKey, JWTPayload, JWTVerifyGetKey, JWTVerifyOptions } from 'jose';
import type { AuthConfig, SsoSettings } from '../../config/schema.js';
import { type AuthOutcome, BEARER_CHALLENGE } from '../authenticate.js';
import { readBearerToken } from './bearer.js';
import { clientMatches, grantsScope, issuedInFuture } from './claims.js';
import { IdentityProviderUnavailableError } from './errors.js';
import { createIssuerKeys, type IssuerKeysOptions } from './issuer-keys.js';
import { loadJose } from './jose.js';

/** Asymmetric only: with HMAC the "secret" could be the provider's public key, and `none` is no signature. */
export const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export const CLOCK_SKEW_SECONDS = 60;

export type SsoVerifierOptions = Partial<IssuerKeysOptions>;

export type SsoVerifier = (authorization: string | undefined, auth: AuthConfig) => Promise<AuthOutcome>;

const denied = (reason: string): AuthOutcome => ({ kind: 'denied', reason, challenge: BEARER_CHALLENGE });

/** A reason code for the log from jose's error codes; the token itself never goes anywhere. */
function failureReason(error: unknown): string {
  const { code, claim, reason } = (error ?? {}) as { code?: string; claim?: string; reason?: string };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'algorithm_not_allowed';
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return 'unknown_key';
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'bad_signature';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (reason === 'missing') return `missing_${claim ?? 'claim'}`;
      if (reason === 'invalid') return 'malformed';
      if (claim === 'iss') return 'wrong_issuer';
      if (claim === 'aud') return 'wrong_audience';
      if (claim === 'nbf' || claim === 'iat') return 'not_yet_valid';
      return 'malformed';
    default:
      return 'malformed';
  }
}

/**
 * A token without `kid` may match several keys of the set; jose then hands the candidates
 * over (its documented pattern) and each is tried in turn.
 */
async function verifySignedToken(token: string, getKey: JWTVerifyGetKey, options: JWTVerifyOptions): Promise<JWTPayload> {
  const { jwtVerify } = await loadJose();
  try {
    return (await jwtVerify(token, getKey, options)).payload;
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') throw error;
    for await (const key of error as AsyncIterable<CryptoKey>) {
      try {
        return (await jwtVerify(token, key, options)).payload;
      } catch (inner) {
        if ((inner as { code?: unknown }).code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') throw inner;
      }
    }
    throw error;
  }
}

function checkClaims(payload: JWTPayload, sso: SsoSettings, nowSeconds: number): string | undefined {
  if (issuedInFuture(payload, nowSeconds, CLOCK_SKEW_SECONDS)) return 'not_yet_valid';
  if (!clientMatches(payload, sso.clientId)) return 'wrong_client';
  if (!grantsScope(payload, sso.scope)) return 'missing_scope';
  return undefined;
}

/**
 * Verifies `Authorization: Bearer <JWT>` against `auth.sso` as strictly as an API gateway's
 * JWT authorizer: the provider's published keys, asymmetric algorithms only, exact issuer,
 * `exp` required, `nbf`/`iat` within 60 s of skew, the configured client and scope, and the
 * audience when one is configured. Cheap to create: nothing is fetched until the first token.
 */
export function createSsoVerifier(options: SsoVerifierOptions = {}): SsoVerifier {
  const now = options.now ?? Date.now;
  const keysFor = createIssuerKeys({
    timeoutMs: options.timeoutMs ?? 3_000,
    refetchCooldownMs: options.refetchCooldownMs ?? 30_000,
    failureBackoffMs: options.failureBackoffMs ?? 5_000,
    ...(options.keysLifetimeMs !== undefined ? { keysLifetimeMs: options.keysLifetimeMs } : {}),
    ...(options.unknownKidBurst !== undefined ? { unknownKidBurst: options.unknownKidBurst } : {}),
    now,
  });

  return async (authorization, auth) => {
    const sso = auth.sso;
    if (!sso) return { kind: 'unavailable', reason: 'sso_not_configured' };
    const bearer = readBearerToken(authorization);
    if (!bearer.ok) return denied(bearer.reason);

    const at = now();
    let payload: JWTPayload;
    try {
      payload = await verifySignedToken(bearer.token, keysFor(sso.issuer), {
        algorithms: ALLOWED_ALGORITHMS,
        issuer: sso.issuer,
        ...(sso.audience !== undefined ? { audience: sso.audience } : {}),
        requiredClaims: ['exp'],
        clockTolerance: CLOCK_SKEW_SECONDS,
        currentDate: new Date(at),
      });
    } catch (error) {
      if (error instanceof IdentityProviderUnavailableError) return { kind: 'unavailable', reason: error.reason };
      return denied(failureReason(error));
    }
    const problem = checkClaims(payload, sso, Math.floor(at / 1000));
    return problem ? denied(problem) : { kind: 'accepted', via: 'sso' };
  };
}
