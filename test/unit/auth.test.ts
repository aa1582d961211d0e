import { describe, expect, it } from 'vitest';
import { BASIC_CHALLENGE, createAuthenticator } from '../../lib/auth/authenticate.js';
import { parseBasicAuthorization } from '../../lib/auth/basic.js';
import { authConfigSchema } from '../../lib/config/schema.js';
import { constantTimeEqual } from '../../lib/shared/constant-time.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const authenticate = createAuthenticator();

describe('constantTimeEqual', () => {
  it('compares strings of any length', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', 'x')).toBe(false);
    expect(constantTimeEqual('abd', 'abc')).toBe(false);
  });

  it('compares bytes, not UTF-16 units: non-ASCII values match only themselves', () => {
    expect(constantTimeEqual('Größe-🚨', 'Größe-🚨')).toBe(true);
    // Two UTF-8 bytes each side, different characters.
    expect(constantTimeEqual('é', 'ab')).toBe(false);
    expect(constantTimeEqual('ab', 'é')).toBe(false);
    expect(constantTimeEqual('e\u0301', 'é')).toBe(false);
  });
});

describe('parseBasicAuthorization', () => {
  it('reads user and password, the password may contain colons', () => {
    expect(parseBasicAuthorization(basic('relay', 'a:b:c'))).toEqual({ username: 'relay', password: 'a:b:c' });
    expect(parseBasicAuthorization(`basic ${Buffer.from('u:p').toString('base64')}`)).toEqual({ username: 'u', password: 'p' });
  });

  it('refuses other schemes, junk and two joined headers', () => {
    expect(parseBasicAuthorization(undefined)).toBeUndefined();
    expect(parseBasicAuthorization('Bearer abc')).toBeUndefined();
    expect(parseBasicAuthorization('Basic !!!')).toBeUndefined();
    expect(parseBasicAuthorization(`Basic ${Buffer.from('nocolon').toString('base64')}`)).toBeUndefined();
    expect(parseBasicAuthorization(`${basic('a', 'b')},${basic('a', 'b')}`)).toBeUndefined();
  });
});

describe('authenticate', () => {
  const basicAuth = authConfigSchema.parse({
    method: 'basic',
    basic: { username: 'relay', password: 's3cret' },
    headers: [{ key: 'X-Channel-Token', value: 'abc' }],
  });

  it('accepts the right credentials and header (header names ignore case)', async () => {
    expect(await authenticate({ authorization: basic('relay', 's3cret'), 'x-channel-token': 'abc' }, basicAuth)).toEqual({
      kind: 'accepted',
      via: 'basic',
    });
  });

  it('refuses a wrong part with the Basic challenge and a log-only reason', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ 'x-channel-token': 'abc' }, 'missing_basic'],
      [{ authorization: basic('relay', 'wrong'), 'x-channel-token': 'abc' }, 'wrong_basic'],
      [{ authorization: basic('Relay', 's3cret'), 'x-channel-token': 'abc' }, 'wrong_basic'],
      [{ authorization: basic('relay', 's3cret'), 'x-channel-token': 'ABC' }, 'wrong_header'],
      [{ authorization: basic('relay', 's3cret') }, 'wrong_header'],
    ];
    for (const [headers, reason] of cases) {
      expect(await authenticate(headers, basicAuth)).toEqual({ kind: 'denied', reason, challenge: BASIC_CHALLENGE });
    }
    expect(BASIC_CHALLENGE).toBe('Basic realm="cost-alert-relay"');
  });

  it('checks custom headers with method none too', async () => {
    const none = authConfigSchema.parse({
      method: 'none',
      headers: [
        { key: 'X-A', value: '1' },
        { key: 'X-B', value: '2' },
      ],
    });
    expect((await authenticate({ 'x-a': '1', 'x-b': '2' }, none)).kind).toBe('accepted');
    expect((await authenticate({ 'x-a': '1' }, none)).kind).toBe('denied');
    expect((await authenticate({}, authConfigSchema.parse({ method: 'none' }))).kind).toBe('accepted');
  });

  it('never lets a request through when SSO is configured but cannot be verified', async () => {
    const sso = authConfigSchema.parse({
      method: 'sso',
      sso: { issuer: 'https://idp.example.com', clientId: 'c', scope: 's' },
    });
    expect(await authenticate({ authorization: 'Bearer x' }, sso)).toEqual({ kind: 'unavailable', reason: 'sso_not_supported' });
  });
});
