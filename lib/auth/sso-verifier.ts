import type { SsoVerifier, SsoVerifierOptions } from './sso/verify.js';

/**
 * The SSO verifier, its code loaded with the first delivery that needs it: a configuration
 * with Basic or none never parses bearer tokens, discovery or key sets, so that code stays
 * off every cold start. One verifier per call, kept as long as the returned function, so its
 * key cache lives as long as the container.
 */
export function lazySsoVerifier(options: SsoVerifierOptions = {}): SsoVerifier {
  let loading: Promise<SsoVerifier> | undefined;
  return async (authorization, auth) => {
    loading ??= import('./sso/lazy-verify.js').then(({ createSsoVerifier }) => createSsoVerifier(options));
    let verify: SsoVerifier;
    try {
      verify = await loading;
    } catch {
      // Not remembered: a load that failed once (the file table full, say) would otherwise refuse
      // every SSO delivery until the container is recycled. This one is answered 503, to be sent again.
      loading = undefined;
      return { kind: 'unavailable', reason: 'sso_verifier_not_loaded' };
    }
    return verify(authorization, auth);
  };
}
