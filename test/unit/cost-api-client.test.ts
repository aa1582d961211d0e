import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildApiKey } from '../../lib/api-key/procedure.js';
import { SelectionError } from '../../lib/api-key/select.js';
import { type CostApiClientOptions, createCostApiClient } from '../../lib/cost-api/client.js';
import { CostApiError } from '../../lib/cost-api/errors.js';
import { createLogger } from '../../lib/log/logger.js';
import { type Envelope, type FakePlatform, startFakePlatform } from '../helpers/cost-platform.js';

const ACCOUNTS_PATH = '/api/v2/user-management/accounts/data-access/payer-accounts';
const COST_CENTERS_PATH = '/api/v2/user-management/cost-centers/management/list';

let platform: FakePlatform;
let logLines: string[];

beforeAll(async () => {
  platform = await startFakePlatform();
});
afterAll(() => platform.close());
beforeEach(() => {
  platform.reset();
  logLines = [];
});

const client = (options: Partial<CostApiClientOptions> = {}) =>
  createCostApiClient({
    baseUrl: platform.url,
    backoffBaseMs: 20,
    logger: createLogger({ sink: (line) => logLines.push(line) }),
    ...options,
  });

const credentials = () => ({ username: platform.username, password: platform.password });
const request = (account: string, costCenter = '') => ({
  credentials: credentials(),
  credentialsSource: 'the test credentials',
  account,
  costCenter,
});

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

/** Whatever went wrong, nothing the platform issued or the user typed appears in a message or log line. */
function expectNoSecrets(...texts: string[]): void {
  for (const text of [...texts, ...logLines]) {
    expect(text).not.toContain(platform.password);
    expect(text).not.toContain(platform.userKey);
    for (const token of platform.issuedTokens) expect(text).not.toContain(token);
  }
}

describe('cost platform client', () => {
  it('signs in with a JSON body and sends the token back exactly as received', async () => {
    const api = client();
    const token = await api.generateToken(credentials());
    expect(token.userKey).toBe(platform.userKey);
    expect(token.authorization).toBe(platform.issuedTokens[0]);
    expect(token.apikey).toBe(`${platform.userKey}:-1:null`);

    const accounts = await api.listPayerAccounts({ apikey: token.apikey, authorization: token.authorization });
    expect(accounts.map((a) => a.accountKey)).toEqual(['12345', '67890', '24680']);

    const [login, list] = platform.requests;
    expect(login).toMatchObject({ method: 'POST', path: '/api/v1/authentication/token/generate', status: 200 });
    expect(login?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(login?.body ?? '')).toEqual(credentials());
    expect(list).toMatchObject({ method: 'GET', path: ACCOUNTS_PATH, status: 200 });
    expect(list?.headers['accept']).toBe('application/json');
    expect(list?.headers['apikey']).toBe(`${platform.userKey}:-1:null`);
    expect(list?.headers['authorization']).toBe(token.authorization);
  });

  it('builds <user_key>:<account_key>: for all cost centers, by name, account key or cloud account id', async () => {
    for (const account of ['Production payer', '12345', '123456789012']) {
      const result = await buildApiKey(client(), request(account));
      expect(result.apikey).toBe(`${platform.userKey}:12345:`);
      expect(result.account.accountName).toBe('Production payer');
      expect(result.costCenter).toBeUndefined();
      expect(result.authorization).toBe(platform.issuedTokens.at(-1));
      expect(result.expiresAt).toBeInstanceOf(Date);
    }
    // Without a cost center, the cost-center list is not needed.
    expect(platform.requests.some((r) => r.path === COST_CENTERS_PATH)).toBe(false);
  });

  it('appends the cost center id, asking for the list with the account-scoped key', async () => {
    const byName = await buildApiKey(client(), request('Production payer', 'Web shop'));
    expect(byName.apikey).toBe(`${platform.userKey}:12345:cc-200`);
    const byId = await buildApiKey(client(), request('67890', 'cc-300'));
    expect(byId.apikey).toBe(`${platform.userKey}:67890:cc-300`);
    const lists = platform.requests.filter((r) => r.path === COST_CENTERS_PATH);
    expect(lists.map((r) => r.headers['apikey'])).toEqual([`${platform.userKey}:12345:`, `${platform.userKey}:67890:`]);
    expect(lists.every((r) => r.status === 200)).toBe(true);
  });

  it.each<[Envelope, Envelope]>([
    ['array', 'array'],
    ['data', 'data'],
    ['accounts', 'costCenters'],
    ['items', 'items'],
  ])('reads the lists from a %s / %s envelope', async (accountsEnvelope, costCentersEnvelope) => {
    platform.configure({ accountsEnvelope, costCentersEnvelope });
    const result = await buildApiKey(client(), request('Staging payer', 'QA'));
    expect(result.apikey).toBe(`${platform.userKey}:67890:cc-300`);
  });

  it('follows nextToken pages, passing the token back as token=', async () => {
    platform.configure({ pageSize: 1, accountsEnvelope: 'items', costCentersEnvelope: 'costCenters' });
    const result = await buildApiKey(client(), request('Azure EA'));
    expect(result.apikey).toBe(`${platform.userKey}:24680:`);
    const pages = platform.requests.filter((r) => r.path === ACCOUNTS_PATH);
    expect(pages).toHaveLength(3);
    expect(pages[0]?.query).toEqual({});
    expect(pages[1]?.query['token']).toBeTruthy();
    expect(pages[2]?.query['token']).not.toBe(pages[1]?.query['token']);

    const second = await buildApiKey(client(), request('Production payer', 'Web shop'));
    expect(second.costCenter?.id).toBe('cc-200');
    expect(platform.requests.filter((r) => r.path === COST_CENTERS_PATH)).toHaveLength(2);
  });

  it('waits as long as Retry-After asks on 429, then succeeds', async () => {
    platform.queue('accounts', { kind: 'rate_limited', retryAfter: '1' });
    const started = Date.now();
    const result = await buildApiKey(client(), request('12345'));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(result.apikey).toBe(`${platform.userKey}:12345:`);
    expect(platform.requests.filter((r) => r.path === ACCOUNTS_PATH).map((r) => r.status)).toEqual([429, 200]);
    expect(logLines.some((l) => l.includes('"reason":"rate_limited"'))).toBe(true);
  });

  it('does not wait for a Retry-After longer than the function could', async () => {
    platform.setBehaviour('accounts', { kind: 'rate_limited', retryAfter: '600' });
    const error = await failure(buildApiKey(client(), request('12345')));
    expect(error).toBeInstanceOf(CostApiError);
    expect((error as CostApiError).reason).toBe('rate_limited');
    expect(platform.requests.filter((r) => r.path === ACCOUNTS_PATH)).toHaveLength(1);
  });

  it('retries 5xx a bounded number of times, then names the outage', async () => {
    platform.queue('token', { kind: 'error', status: 502 });
    platform.setBehaviour('accounts', { kind: 'error', status: 503 });
    const error = await failure(buildApiKey(client({ maxAttempts: 3 }), request('12345')));
    expect((error as CostApiError).reason).toBe('platform_unavailable');
    expect(error.message).toContain('payer-accounts');
    expect(error.message).toContain('HTTP 503');
    expect(platform.requests.map((r) => r.status)).toEqual([502, 200, 503, 503, 503]);
    expectNoSecrets(error.message);
  });

  it('gives up on a call that hangs after its timeout, without retrying it', async () => {
    platform.setBehaviour('accounts', { kind: 'hang' });
    const started = Date.now();
    const error = await failure(buildApiKey(client({ timeoutMs: 300 }), request('12345')));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((error as CostApiError).reason).toBe('timeout');
    expect(platform.requests.filter((r) => r.path === ACCOUNTS_PATH)).toHaveLength(1);
  });

  it('names where the refused credentials came from, never the password', async () => {
    const error = await failure(
      buildApiKey(client(), { ...request('12345'), credentials: { username: platform.username, password: 'wrong-password-123' } }),
    );
    expect((error as CostApiError).reason).toBe('login_failed');
    expect(error.message).toContain('the test credentials');
    expect(error.message).not.toContain('wrong-password-123');
    expect(platform.requests.map((r) => r.status)).toEqual([401]);
  });

  it('lists the available accounts by name and key when the selection matches none', async () => {
    const error = await failure(buildApiKey(client(), request('Marketing payer')));
    expect(error).toBeInstanceOf(SelectionError);
    expect(error.message).toContain('"Production payer" (accountKey 12345');
    expect(error.message).toContain('"Azure EA" (accountKey 24680');
    expectNoSecrets(error.message);
  });

  it('lists the cost centers of the account when the cost center matches none', async () => {
    const error = await failure(buildApiKey(client(), request('12345', 'Marketing')));
    expect((error as SelectionError).reason).toBe('cost_center_not_found');
    expect(error.message).toContain('"Data platform" (id cc-100)');
    expect(error.message).not.toContain('cc-300');
  });

  it('refuses an answer that is not the documented shape, naming the field', async () => {
    platform.setBehaviour('accounts', { kind: 'answer', status: 200, body: { data: [{ accountName: 'x' }] } });
    const error = await failure(buildApiKey(client(), request('12345')));
    expect((error as CostApiError).reason).toBe('invalid_response');
    expect(error.message).toContain('[0].accountKey');

    platform.setBehaviour('accounts', { kind: 'answer', status: 200, body: { results: [] } });
    expect((await failure(buildApiKey(client(), request('12345')))).message).toContain('members: results');

    platform.setBehaviour('token', { kind: 'answer', status: 200, body: { Error: 'Failed Retrieving Authentication Token' } });
    expect(((await failure(buildApiKey(client(), request('12345')))) as CostApiError).reason).toBe('login_failed');
  });

  it('reports a refused token as unauthorized', async () => {
    const api = client();
    const token = await api.generateToken(credentials());
    platform.revokeTokens();
    const error = await failure(api.listPayerAccounts({ apikey: token.apikey, authorization: token.authorization }));
    expect((error as CostApiError).reason).toBe('unauthorized');
    expect((error as CostApiError).status).toBe(401);
    expectNoSecrets(error.message);
  });
});

describe('the platform client follows no redirect: credentials go to the platform only', () => {
  let elsewhere: FakePlatform;
  beforeAll(async () => {
    elsewhere = await startFakePlatform();
  });
  afterAll(() => elsewhere.close());

  it('a 307 from token generation does not re-post the username and password', async () => {
    platform.setBehaviour('token', { kind: 'redirect', status: 307, location: `${elsewhere.url}/api/v1/authentication/token/generate` });
    const error = await failure(client().generateToken(credentials()));
    expect(error).toMatchObject({ name: 'CostApiError', reason: 'redirect_refused', status: 307 });
    expect(elsewhere.requests).toHaveLength(0);
    expect(platform.requests).toHaveLength(1);
  });

  it('a 302 on a v2 call does not send the apikey header along', async () => {
    platform.setBehaviour('accounts', { kind: 'redirect', status: 302, location: `${elsewhere.url}${ACCOUNTS_PATH}` });
    const error = await failure(client().listPayerAccounts({ apikey: 'user:1:', authorization: 'token' }));
    expect(error).toMatchObject({ reason: 'redirect_refused', call: 'payer_accounts' });
    expect(elsewhere.requests).toHaveLength(0);
  });
});
