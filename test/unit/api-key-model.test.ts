import { describe, expect, it } from 'vitest';
import { apiKeySelectionSchema } from '../../lib/api-key/secret.js';
import { SelectionError, selectAccount, selectCostCenter } from '../../lib/api-key/select.js';
import { isoSeconds, tokenExpiry } from '../../lib/api-key/token-expiry.js';
import { ApiKeyFormatError, formatApiKey, maskApiKey, parseApiKey, userKeyOf } from '../../lib/cost-api/api-key.js';
import { payerAccountSchema, unwrapList } from '../../lib/cost-api/schema.js';

describe('API key model', () => {
  it('formats the three segments, with an empty third segment for all cost centers', () => {
    expect(formatApiKey({ userKey: 'abc', accountKey: '12345', costCenterId: '' })).toBe('abc:12345:');
    expect(formatApiKey({ userKey: 'abc', accountKey: '12345', costCenterId: 'cc-1' })).toBe('abc:12345:cc-1');
  });

  it('refuses empty required segments and segments containing ":"', () => {
    expect(() => formatApiKey({ userKey: '', accountKey: '1', costCenterId: '' })).toThrow(/user key is empty/);
    expect(() => formatApiKey({ userKey: 'abc', accountKey: '', costCenterId: '' })).toThrow(/account key is empty/);
    expect(() => formatApiKey({ userKey: 'a:b', accountKey: '1', costCenterId: '' })).toThrow(ApiKeyFormatError);
    expect(() => formatApiKey({ userKey: 'abc', accountKey: '1', costCenterId: 'x:y' })).toThrow(/cost center id contains ":"/);
  });

  it('parses what it formats and refuses other shapes without echoing them', () => {
    expect(parseApiKey('abc:12345:')).toEqual({ userKey: 'abc', accountKey: '12345', costCenterId: '' });
    expect(parseApiKey('abc:12345:cc-1')).toEqual({ userKey: 'abc', accountKey: '12345', costCenterId: 'cc-1' });
    for (const bad of ['secretuserkey', 'secretuserkey:12345', ':12345:', 'secretuserkey::', 'secretuserkey:1:2:3']) {
      let error: unknown;
      try {
        parseApiKey(bad);
      } catch (e) {
        error = e;
      }
      expect(error, bad).toBeInstanceOf(ApiKeyFormatError);
      expect((error as Error).message).not.toContain('secretuserkey');
    }
  });

  it('takes the user key as the first segment of the generated key, whatever follows', () => {
    expect(userKeyOf('f00dbabe1234:-1:null')).toBe('f00dbabe1234');
    expect(userKeyOf('f00dbabe1234:-1')).toBe('f00dbabe1234');
    expect(userKeyOf('short:-1:null')).toBe('short');
    expect(() => userKeyOf(':-1:null')).toThrow(ApiKeyFormatError);
  });

  it('masks the user key', () => {
    expect(maskApiKey('0123456789abcdef0123:12345:')).toBe('****0123:12345:');
    expect(maskApiKey('short:12345:cc-1')).toBe('****:12345:cc-1');
  });
});

describe('token expiry', () => {
  const jwt = (payload: unknown) =>
    `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.sig`;

  it('reads the exp claim', () => {
    expect(tokenExpiry(jwt({ exp: 1767312000 }))?.toISOString()).toBe('2026-01-02T00:00:00.000Z');
    expect(tokenExpiry(`Bearer ${jwt({ exp: 1767312000 })}`)?.toISOString()).toBe('2026-01-02T00:00:00.000Z');
  });

  it('is null when the token does not say', () => {
    expect(tokenExpiry('opaque-token')).toBeNull();
    expect(tokenExpiry(jwt({ sub: 'x' }))).toBeNull();
    expect(tokenExpiry(jwt({ exp: '1767312000' }))).toBeNull();
    expect(tokenExpiry('a.%%%.c')).toBeNull();
    expect(tokenExpiry(`a.${Buffer.from('not json').toString('base64url')}.c`)).toBeNull();
  });

  it('writes times to the second', () => {
    expect(isoSeconds(new Date('2026-01-01T00:00:00.123Z'))).toBe('2026-01-01T00:00:00Z');
  });
});

describe('list envelopes', () => {
  it('accepts a bare array or the array under data, accounts, costCenters or items', () => {
    expect(unwrapList([1, 2])).toEqual({ ok: true, items: [1, 2] });
    for (const member of ['data', 'accounts', 'costCenters', 'items']) {
      expect(unwrapList({ [member]: [1], total: 1 })).toEqual({ ok: true, items: [1] });
    }
    expect(unwrapList({ items: [1], nextToken: 'abc' })).toEqual({ ok: true, items: [1], nextToken: 'abc' });
    expect(unwrapList({ items: [1], nextToken: null })).toEqual({ ok: true, items: [1] });
  });

  it('explains what it found instead', () => {
    expect(unwrapList({ results: [1] })).toEqual({ ok: false, problem: expect.stringContaining('members: results') });
    expect(unwrapList('text')).toEqual({ ok: false, problem: expect.stringContaining('string') });
    expect(unwrapList({ items: [], nextToken: 5 })).toEqual({ ok: false, problem: expect.stringContaining('nextToken') });
  });

  it('reads account records with numeric keys as text', () => {
    expect(
      payerAccountSchema.parse({ accountKey: 12345, accountId: '123456789012', accountName: 'Prod', cloudTypeId: 0, divisionId: 0 }),
    ).toEqual({
      accountKey: '12345',
      accountId: '123456789012',
      accountName: 'Prod',
      cloudTypeId: 0,
    });
    expect(payerAccountSchema.safeParse({ accountName: 'no key' }).success).toBe(false);
  });
});

describe('selection', () => {
  const accounts = [
    { accountKey: '12345', accountId: '123456789012', accountName: 'Production payer', cloudTypeId: 0 },
    { accountKey: '67890', accountId: '210987654321', accountName: 'Staging payer', cloudTypeId: 0 },
    // An account whose name looks like another account's key: the key wins.
    { accountKey: '11111', accountId: '999999999999', accountName: '67890', cloudTypeId: 0 },
    { accountKey: '22222', accountId: '888888888888', accountName: 'Twin', cloudTypeId: 0 },
    { accountKey: '33333', accountId: '777777777777', accountName: 'Twin', cloudTypeId: 1 },
  ];

  it('selects by account key, cloud account id or name (ignoring case last)', () => {
    expect(selectAccount(accounts, '12345').accountKey).toBe('12345');
    expect(selectAccount(accounts, '210987654321').accountKey).toBe('67890');
    expect(selectAccount(accounts, 'Production payer').accountKey).toBe('12345');
    expect(selectAccount(accounts, ' production PAYER ').accountKey).toBe('12345');
    expect(selectAccount(accounts, '67890').accountName).toBe('Staging payer');
  });

  it('lists the available accounts by name and key when nothing matches', () => {
    let error: unknown;
    try {
      selectAccount(accounts, 'Nope');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SelectionError);
    expect((error as SelectionError).reason).toBe('account_not_found');
    expect((error as Error).message).toContain('"Production payer" (accountKey 12345, cloud account 123456789012)');
    expect((error as Error).message).toContain('"Staging payer" (accountKey 67890');
  });

  it('refuses to guess between accounts of the same name', () => {
    expect(() => selectAccount(accounts, 'Twin')).toThrow(/matches 2 accounts.*accountKey 22222.*accountKey 33333/);
  });

  it('selects a cost center by id or name', () => {
    const centers = [
      { id: 'cc-100', name: 'Data platform', code: '' },
      { id: 'cc-200', name: 'Web shop', code: '' },
    ];
    expect(selectCostCenter(centers, 'cc-200').name).toBe('Web shop');
    expect(selectCostCenter(centers, 'data platform').id).toBe('cc-100');
    expect(() => selectCostCenter(centers, 'Marketing')).toThrow(/No cost center matches "Marketing".*"Data platform" \(id cc-100\)/);
  });

  it('reads the selection from the secret, keeping other members', () => {
    expect(apiKeySelectionSchema.parse({ account: 12345, note: 'x' })).toEqual({ account: '12345', costCenter: '', note: 'x' });
    expect(apiKeySelectionSchema.parse({ account: ' Prod ', costCenter: null })).toEqual({ account: 'Prod', costCenter: '' });
    expect(apiKeySelectionSchema.safeParse({ costCenter: 'cc' }).success).toBe(false);
    expect(apiKeySelectionSchema.safeParse({ account: '  ' }).success).toBe(false);
  });
});
