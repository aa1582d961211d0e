/**
 * Identity providers name the same facts differently (shared/reference/cost-api.md): the
 * client id is in `client_id`, `cid` (Okta), `azp` or `appid` (Entra ID); scopes are in
 * `scope` (space-separated) or `scp` (array or space-separated string), and for app-only
 * tokens of Entra ID in `roles` (array).
 */
export type Claims = Record<string, unknown>;

const CLIENT_CLAIMS = ['client_id', 'cid', 'azp', 'appid'] as const;

const words = (value: string): string[] => value.split(' ').filter((w) => w.length > 0);

function grantedScopes(claims: Claims): Set<string> {
  const granted = new Set<string>();
  const add = (value: unknown) => {
    if (typeof value === 'string') for (const word of words(value)) granted.add(word);
    if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') granted.add(item);
  };
  add(claims['scope']);
  add(claims['scp']);
  // Entra ID's app-only (client-credentials) tokens carry the granted permission as an app role.
  add(claims['roles']);
  return granted;
}

/** Every scope the operator configured (one, or several separated by spaces) must be granted. */
export function grantsScope(claims: Claims, configured: string): boolean {
  const wanted = words(configured);
  const granted = grantedScopes(claims);
  return wanted.length > 0 && wanted.every((s) => granted.has(s));
}

/**
 * The client claims that are present must all name the configured client; a token with none
 * cannot be tied to the platform's client and fails. Requiring agreement means a provider that
 * sets two of them (client_id and azp, say) cannot be satisfied by just one.
 */
export function clientMatches(claims: Claims, clientId: string): boolean {
  const present = CLIENT_CLAIMS.filter((name) => claims[name] !== undefined);
  return present.length > 0 && present.every((name) => claims[name] === clientId);
}

/** `iat` in the future beyond the tolerated skew: the token is not valid yet. */
export function issuedInFuture(claims: Claims, nowSeconds: number, toleranceSeconds: number): boolean {
  const iat = claims['iat'];
  return typeof iat === 'number' && iat > nowSeconds + toleranceSeconds;
}
