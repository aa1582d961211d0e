import { type AuthConfig, authConfigSchema } from './schema.js';

/**
 * One way a new `auth` block lets through requests the live one refuses. `says` is a sentence
 * for the operator: it names methods, header names and paths, never a value.
 */
export interface AuthWeakening {
  kind: 'method' | 'header' | 'audience';
  says: string;
}

/**
 * Strength of the methods, for what counts as a weakening: `none` checks nothing; Basic checks
 * one shared, long-lived password; SSO checks short-lived tokens the identity provider signs.
 * So a move to `none` weakens, SSO to Basic weakens (a token is replaced by a static shared
 * secret), and Basic to SSO does not.
 */
const STRENGTH: Readonly<Record<AuthConfig['method'], number>> = { none: 0, basic: 1, sso: 2 };

/** What the relay then accepts, for each method something can move down to. */
const WHAT_IS_LOST: Readonly<Record<Exclude<AuthConfig['method'], 'sso'>, string>> = {
  none: 'requests are accepted without a password or a token',
  basic: 'requests are accepted with the shared Basic password instead of a token from the identity provider',
};

/**
 * The live `auth` block, when the live configuration has one that reads as such. The rest of
 * the live configuration may be broken: authentication is judged on its own.
 */
function liveAuth(live: unknown): AuthConfig | undefined {
  if (typeof live !== 'object' || live === null || !Object.hasOwn(live, 'auth')) return undefined;
  const result = authConfigSchema.safeParse((live as { auth: unknown }).auth);
  return result.success ? result.data : undefined;
}

/**
 * Every change from `live` (the live configuration as parsed JSON, or undefined when it is not
 * JSON) to `next` (a validated `auth` block) that weakens authentication:
 * - the method moves down from SSO to Basic to none;
 * - a custom header the live configuration requires is no longer required (names ignore case,
 *   as in HTTP: renaming a header counts as removing the old one);
 * - SSO stays, but tokens are no longer checked for an audience.
 * A changed password, header value, SSO issuer, client id or audience is a change, not a
 * weakening. When the live `auth` cannot be read (not JSON, wrong shape), the relay refuses
 * every request, so only a move to `none` is named: nothing else can be compared.
 */
export function authWeakenings(live: unknown, next: AuthConfig): AuthWeakening[] {
  const before = liveAuth(live);
  if (!before) {
    return next.method === 'none'
      ? [{ kind: 'method', says: `authentication becomes none (the live configuration has no readable auth): ${WHAT_IS_LOST.none}` }]
      : [];
  }
  const weakenings: AuthWeakening[] = [];
  if (next.method !== 'sso' && STRENGTH[next.method] < STRENGTH[before.method]) {
    weakenings.push({
      kind: 'method',
      says: `authentication method changes from ${before.method} to ${next.method}: ${WHAT_IS_LOST[next.method]}`,
    });
  }
  const required = new Set(next.headers.map((h) => h.key.toLowerCase()));
  const named = new Set<string>();
  for (const { key } of before.headers) {
    if (required.has(key.toLowerCase()) || named.has(key.toLowerCase())) continue;
    named.add(key.toLowerCase());
    weakenings.push({ kind: 'header', says: `custom header ${key} is no longer required (auth.headers)` });
  }
  if (before.method === 'sso' && next.method === 'sso' && before.sso?.audience !== undefined && next.sso?.audience === undefined) {
    weakenings.push({ kind: 'audience', says: 'SSO tokens are no longer checked for an audience (auth.sso.audience removed)' });
  }
  return weakenings;
}
