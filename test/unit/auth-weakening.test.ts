import { describe, expect, it } from 'vitest';
import { authWeakenings } from '../../lib/config/auth-weakening.js';
import type { AuthConfig } from '../../lib/config/schema.js';

const basic: AuthConfig = {
  method: 'basic',
  basic: { username: 'relay', password: 'old-pass-1' },
  headers: [{ key: 'X-Channel-Token', value: 'tok-a1' }],
};
const sso: AuthConfig = {
  method: 'sso',
  sso: { issuer: 'https://idp.example.com', clientId: 'platform', scope: 'relay', audience: 'relay-api' },
  headers: [],
};
const none: AuthConfig = { method: 'none', headers: [] };
const live = (auth: unknown) => ({ auth, destinations: { default: { url: 'https://hooks.slack.com/services/T/B/live-url' } } });
const kinds = (live: unknown, next: AuthConfig) => authWeakenings(live, next).map((w) => w.kind);

describe('which auth changes weaken authentication', () => {
  it('a move to none, from Basic or SSO, weakens', () => {
    expect(authWeakenings(live({ ...basic, headers: [] }), none)).toEqual([
      { kind: 'method', says: 'authentication method changes from basic to none: requests are accepted without a password or a token' },
    ]);
    expect(kinds(live(sso), none)).toEqual(['method']);
  });

  it('SSO to Basic weakens (a static shared password instead of tokens); Basic to SSO does not', () => {
    const ssoToBasic = authWeakenings(live(sso), { ...basic, headers: [] });
    expect(ssoToBasic).toEqual([
      {
        kind: 'method',
        says: 'authentication method changes from sso to basic: requests are accepted with the shared Basic password instead of a token from the identity provider',
      },
    ]);
    expect(authWeakenings(live(basic), { ...sso, headers: basic.headers })).toEqual([]);
    expect(authWeakenings(live(none), basic)).toEqual([]);
  });

  it('each custom header no longer required is named by its key, once, ignoring case', () => {
    const twoHeaders = {
      ...basic,
      headers: [...basic.headers, { key: 'X-Tenant', value: 'ten-b2' }, { key: 'x-tenant', value: 'ten-b2' }],
    };
    const weakenings = authWeakenings(live(twoHeaders), { ...basic, headers: [] });
    expect(weakenings).toEqual([
      { kind: 'header', says: 'custom header X-Channel-Token is no longer required (auth.headers)' },
      { kind: 'header', says: 'custom header X-Tenant is no longer required (auth.headers)' },
    ]);
    // Renaming counts as dropping the old one; a different case of the same name does not.
    expect(kinds(live(basic), { ...basic, headers: [{ key: 'X-Other', value: 'tok-a1' }] })).toEqual(['header']);
    expect(authWeakenings(live(basic), { ...basic, headers: [{ key: 'x-channel-token', value: 'tok-a1' }] })).toEqual([]);
    // Removed with the method: both are said.
    expect(kinds(live(basic), none)).toEqual(['method', 'header']);
  });

  it('new values are changes, not weakenings: password, username, header value, SSO settings, added requirements', () => {
    expect(authWeakenings(live(basic), { ...basic, basic: { username: 'ops', password: 'new-pass-2' } })).toEqual([]);
    expect(authWeakenings(live(basic), { ...basic, headers: [{ key: 'X-Channel-Token', value: 'tok-new' }] })).toEqual([]);
    expect(authWeakenings(live(basic), { ...basic, headers: [...basic.headers, { key: 'X-More', value: 'm' }] })).toEqual([]);
    const otherIdp = { ...sso, sso: { issuer: 'https://idp2.example.com', clientId: 'other', scope: 'x', audience: 'other-api' } };
    expect(authWeakenings(live(sso), otherIdp)).toEqual([]);
    expect(authWeakenings(live(basic), basic)).toEqual([]);
    // A `basic` block kept or dropped under SSO is not used by the relay.
    expect(authWeakenings(live({ ...sso, basic: basic.basic }), sso)).toEqual([]);
  });

  it('dropping the SSO audience weakens the token check; adding one does not', () => {
    const { audience: _, ...withoutAudience } = sso.sso ?? { issuer: '', clientId: '', scope: '' };
    expect(authWeakenings(live(sso), { ...sso, sso: withoutAudience })).toEqual([
      { kind: 'audience', says: 'SSO tokens are no longer checked for an audience (auth.sso.audience removed)' },
    ]);
    expect(authWeakenings(live({ ...sso, sso: withoutAudience }), sso)).toEqual([]);
  });

  it('a live configuration without a readable auth block: only a move to none is said', () => {
    const said =
      'authentication becomes none (the live configuration has no readable auth): requests are accepted without a password or a token';
    for (const unreadable of [
      undefined,
      null,
      'not-an-object',
      [1],
      {},
      live('basic'),
      live({ method: 'basic', basic: 'pw-in-a-string' }),
      live({ method: 'kerberos' }),
    ]) {
      expect(authWeakenings(unreadable, none)).toEqual([{ kind: 'method', says: said }]);
      expect(authWeakenings(unreadable, basic)).toEqual([]);
    }
    // The rest of the live configuration may be broken: auth is judged on its own.
    expect(kinds({ auth: basic, destinations: 'broken' }, none)).toEqual(['method', 'header']);
    // `auth` inherited rather than own is no auth block.
    expect(kinds(Object.create({ auth: basic }), basic)).toEqual([]);
  });

  it('never says a value', () => {
    const everything = [
      ...authWeakenings(live(basic), none),
      ...authWeakenings(live(sso), { ...basic, headers: [] }),
      ...authWeakenings(live({ method: 'basic', basic: 'pw-in-a-string' }), none),
    ];
    expect(JSON.stringify(everything)).not.toMatch(/old-pass-1|tok-a1|idp\.example|platform|relay-api|pw-in-a-string|live-url/);
  });
});
