import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

export interface FakeCostCenter {
  /** A number is sent as a JSON number, as the platform does in some places. */
  id: string | number;
  name: string;
  code?: string;
  /** The v2 record's `linkedAccounts` exactly as sent (any of the forms the contract lists); `[]` by default. */
  linkedAccounts?: unknown;
  /** The v2 record's `linkedAccountsIds` exactly as sent; absent by default. */
  linkedAccountsIds?: unknown;
  /** The cloud accounts the v1 list names for it, in its documented form (`{linkedAccountId, linkedAccountName}`). */
  v1LinkedAccounts?: string[];
}

export interface FakeAccount {
  /** The platform's own key: a number in JSON, the second API-key segment. */
  accountKey: number;
  /** The cloud provider's account id. */
  accountId: string;
  accountName: string;
  cloudTypeId: number;
  costCenters: FakeCostCenter[];
}

/** Where the list sits in the answer: the envelope is undocumented, so tests try each. */
export type Envelope = 'array' | 'data' | 'accounts' | 'costCenters' | 'items';

export type Endpoint = 'token' | 'accounts' | 'costCenters' | 'costCentersV1' | 'costAndUsage' | 'events' | 'eventList' | 'eventDelete';

export type PlatformBehaviour =
  | { kind: 'normal' }
  | { kind: 'error'; status: number }
  | { kind: 'rate_limited'; retryAfter: string }
  | { kind: 'hang' }
  /** A redirect to `location`, as a misconfigured proxy or a hostile platform might answer. */
  | { kind: 'redirect'; status: number; location: string }
  /** Any answer, for shapes the platform might send one day. */
  | { kind: 'answer'; status: number; body: unknown };

export interface PlatformRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: string;
  status: number;
  /** For a request left hanging: true once the caller gave up on it and closed the connection. */
  closed?: boolean;
}

export interface FakePlatformOptions {
  username?: string;
  password?: string;
  accounts?: FakeAccount[];
  accountsEnvelope?: Envelope;
  costCentersEnvelope?: Envelope;
  /** Lists longer than this are paginated with `nextToken` (passed back as `token=`). */
  pageSize?: number;
  /** Every Nth v2 request is answered 429 with `Retry-After: 1`, as the platform does above its rate limit. */
  rateLimitEvery?: number;
  tokenLifetimeSeconds?: number;
}

export interface FakePlatform {
  url: string;
  username: string;
  password: string;
  userKey: string;
  accounts: FakeAccount[];
  /** Every request in arrival order, with the status it was answered (0 = left hanging). */
  requests: PlatformRequest[];
  /** Every bearer token handed out, in order. */
  issuedTokens: string[];
  /** Daily cost per cloud account and day (`YYYY-MM-DD`); a day without one has no row. */
  dailyCosts: Map<string, Map<string, number | string>>;
  /** Cost events written, by uuid, with the payer's account key they belong to; `deleted` once deleted. */
  events: Map<string, { accountKey: number; body: Record<string, unknown>; deleted?: boolean }>;
  /** With `accountKey`, only requests whose API key is scoped to that payer get it. */
  setBehaviour(endpoint: Endpoint, behaviour: PlatformBehaviour, accountKey?: number): void;
  /** The next `count` requests to `endpoint` get `behaviour`, then its usual behaviour again. */
  queue(endpoint: Endpoint, behaviour: PlatformBehaviour, count?: number): void;
  /** Tokens issued so far are refused from now on (as after a password change). */
  revokeTokens(): void;
  configure(options: Pick<FakePlatformOptions, 'accountsEnvelope' | 'costCentersEnvelope' | 'pageSize' | 'rateLimitEvery'>): void;
  reset(): void;
  close(): Promise<void>;
}

export const DEFAULT_ACCOUNTS: FakeAccount[] = [
  {
    accountKey: 12345,
    accountId: '123456789012',
    accountName: 'Production payer',
    cloudTypeId: 0,
    costCenters: [
      { id: 'cc-100', name: 'Data platform', code: 'DP' },
      { id: 'cc-200', name: 'Web shop', code: 'WS' },
    ],
  },
  {
    accountKey: 67890,
    accountId: '210987654321',
    accountName: 'Staging payer',
    cloudTypeId: 0,
    costCenters: [{ id: 'cc-300', name: 'QA', code: 'QA' }],
  },
  { accountKey: 24680, accountId: 'sub-azure-0001', accountName: 'Azure EA', cloudTypeId: 1, costCenters: [] },
];

const PATHS: Record<string, Endpoint> = {
  '/api/v1/authentication/token/generate': 'token',
  '/api/v2/user-management/accounts/data-access/payer-accounts': 'accounts',
  '/api/v2/user-management/cost-centers/management/list': 'costCenters',
  '/api/v1/users/cost-centers': 'costCentersV1',
  '/api/v2/invoices/cost-and-usage': 'costAndUsage',
  '/api/v1/users/events': 'events',
};
const endpointOf = (path: string, method: string | undefined): Endpoint | undefined =>
  PATHS[path] === 'events' && method === 'GET'
    ? 'eventList'
    : (PATHS[path] ?? (/^\/api\/v1\/users\/events\/[^/]+$/.test(path) ? 'eventDelete' : undefined));
const METHODS: Record<Endpoint, string> = {
  token: 'POST',
  accounts: 'GET',
  costCenters: 'GET',
  costCentersV1: 'GET',
  costAndUsage: 'GET',
  events: 'POST',
  eventList: 'GET',
  eventDelete: 'DELETE',
};
/** The query the cost-and-usage call must carry (reference/cost-api.md), besides the account and the dates. */
const COST_QUERY = { groupBy: 'linkedaccid', periodGranLevel: 'day', costType: 'cost', isAmortized: 'true' };

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/**
 * A loopback stand-in for the cost platform (spec 4.1-4.3, reference/cost-api.md): exact
 * paths, methods and headers; the token must come back exactly as issued; 401 on a wrong
 * password or unknown key, 400 on a malformed key; the documented record shapes under a
 * chosen envelope; `nextToken` pagination; the older v1 cost-center list with its linked
 * accounts; 429 now and then; and it can fail or hang on demand, for every payer or one.
 */
export async function startFakePlatform(options: FakePlatformOptions = {}): Promise<FakePlatform> {
  const username = options.username ?? 'finops@example.com';
  const password = options.password ?? `pw-${randomBytes(9).toString('base64url')}`;
  const userKey = `uk${randomBytes(12).toString('hex')}`;
  const accounts = options.accounts ?? DEFAULT_ACCOUNTS;
  const lifetime = options.tokenLifetimeSeconds ?? 86_400;
  let settings = {
    accountsEnvelope: options.accountsEnvelope ?? ('data' as Envelope),
    costCentersEnvelope: options.costCentersEnvelope ?? ('array' as Envelope),
    pageSize: options.pageSize,
    rateLimitEvery: options.rateLimitEvery,
  };

  const requests: PlatformRequest[] = [];
  const issuedTokens: string[] = [];
  const dailyCosts = new Map<string, Map<string, number | string>>();
  const events = new Map<string, { accountKey: number; body: Record<string, unknown>; deleted?: boolean }>();
  const validTokens = new Set<string>();
  const behaviours = new Map<Endpoint, PlatformBehaviour>();
  const payerBehaviours = new Map<string, PlatformBehaviour>();
  const queued = new Map<Endpoint, PlatformBehaviour[]>();
  const hanging = new Set<ServerResponse>();
  let v2Count = 0;

  const issueToken = (): string => {
    const now = Math.floor(Date.now() / 1000);
    const token = [
      b64url({ alg: 'HS256', typ: 'JWT' }),
      b64url({ sub: username, iat: now, exp: now + lifetime, jti: randomUUID() }),
      randomBytes(32).toString('base64url'),
    ].join('.');
    issuedTokens.push(token);
    validTokens.add(token);
    return token;
  };

  const page = (items: unknown[], envelope: Envelope, token: string | undefined): { status: number; body: unknown } => {
    let offset = 0;
    if (token !== undefined) {
      const match = /^page-(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
      if (!match) return { status: 400, body: { message: 'invalid token' } };
      offset = Number(match[1]);
    }
    // A bare array cannot carry a nextToken, so it always holds the whole list.
    const size = envelope === 'array' ? undefined : settings.pageSize;
    const slice = size ? items.slice(offset, offset + size) : items;
    const next = size && offset + size < items.length ? Buffer.from(`page-${offset + size}`).toString('base64url') : undefined;
    if (envelope === 'array') return { status: 200, body: slice };
    return { status: 200, body: { [envelope]: slice, ...(next ? { nextToken: next } : {}) } };
  };

  /** `<user_key>:<account>:<cost center>`: 400 when malformed, 401 for an unknown user key. */
  const checkKey = (apikey: string | undefined, accountScoped: boolean): { status: number } | { account: FakeAccount | undefined } => {
    if (!apikey) return { status: 401 };
    const segments = apikey.split(':');
    if (segments.length !== 3 || segments.some((s) => s.trim() !== s)) return { status: 400 };
    const [user, accountKey, costCenter] = segments as [string, string, string];
    if (user !== userKey) return { status: 401 };
    if (accountKey === '-1') {
      if (accountScoped || costCenter !== 'null') return { status: 400 };
      return { account: undefined };
    }
    const account = accounts.find((a) => String(a.accountKey) === accountKey);
    if (!account) return { status: 400 };
    if (accountScoped && costCenter !== '') return { status: 400 };
    if (costCenter !== '' && !account.costCenters.some((c) => String(c.id) === costCenter)) return { status: 400 };
    return { account };
  };

  const handle = (endpoint: Endpoint, req: IncomingMessage, body: string, url: URL): { status: number; body?: unknown; hang?: boolean } => {
    const query = url.searchParams;
    if (req.method !== METHODS[endpoint]) return { status: 405, body: { message: 'Method Not Allowed' } };
    if (endpoint === 'token') {
      if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json'))
        return { status: 400, body: { message: 'Bad Request' } };
      let credentials: { username?: unknown; password?: unknown };
      try {
        credentials = JSON.parse(body) as typeof credentials;
      } catch {
        return { status: 400, body: { message: 'Bad Request' } };
      }
      if (credentials.username !== username || credentials.password !== password) {
        return { status: 401, body: { Error: 'Failed Retrieving Authentication Token' } };
      }
      return { status: 200, body: { Authorization: issueToken(), apikey: `${userKey}:-1:null` } };
    }

    if (settings.rateLimitEvery && ++v2Count % settings.rateLimitEvery === 0) {
      return { status: 429, body: { message: 'Too Many Requests' } };
    }
    if (req.headers['accept'] !== 'application/json') return { status: 400, body: { message: 'accept must be application/json' } };
    const accountScoped = endpoint !== 'accounts';
    // Exactly as issued: a "Bearer " prefix is refused, as reported for the real platform.
    const authorization = req.headers['authorization'];
    if (!authorization || !validTokens.has(authorization)) return { status: 401, body: { message: 'Unauthorized' } };
    const apikey = req.headers['apikey'];
    const key = checkKey(typeof apikey === 'string' ? apikey : undefined, accountScoped);
    if ('status' in key) {
      // Without an account-scoped key these calls hang until a gateway timeout.
      if (accountScoped && key.status === 400 && typeof apikey === 'string' && apikey.split(':')[1] === '-1') {
        return { status: 0, hang: true };
      }
      return { status: key.status, body: { message: key.status === 401 ? 'Unauthorized' : 'Invalid apikey' } };
    }
    const token = query.get('token') ?? undefined;
    if (endpoint === 'accounts') {
      const records = accounts.map((a) => ({
        accountKey: a.accountKey,
        accountId: a.accountId,
        accountName: a.accountName,
        cloudTypeId: a.cloudTypeId,
        accountTypeId: 1,
        divisionId: 0,
        isAllAccounts: false,
      }));
      return page(records, settings.accountsEnvelope, token);
    }
    const account = key.account as FakeAccount;
    if (endpoint === 'costAndUsage') {
      for (const [name, value] of Object.entries(COST_QUERY)) {
        if (query.get(name) !== value) return { status: 400, body: { message: `${name} must be ${value}` } };
      }
      const accountId = query.get('filters[linkedaccid]') ?? '';
      const [from, to] = [query.get('startDate') ?? '', query.get('endDate') ?? ''];
      if (!/^\d{4}-\d{2}-\d{2}$/.test(from) || !/^\d{4}-\d{2}-\d{2}$/.test(to)) return { status: 400, body: { message: 'dates' } };
      const rows = [...(dailyCosts.get(accountId) ?? new Map())]
        .filter(([day]) => day >= from && day <= to)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([day, cost]) => ({ group_by: accountId, usage_date: day, account_id: accountId, total_cost: cost, total_usage_quantity: 1 }));
      return page(rows, 'data', token);
    }
    if (endpoint === 'eventList') {
      const [from, to] = [query.get('startDate') ?? '', query.get('endDate') ?? ''];
      if (!/^\d{4}-\d{2}-\d{2}$/.test(from) || !/^\d{4}-\d{2}-\d{2}$/.test(to)) return { status: 400, body: { message: 'dates' } };
      const listed = [...events]
        .filter(
          ([, e]) => !e.deleted && e.accountKey === account.accountKey && String(e.body['date']) >= from && String(e.body['date']) <= to,
        )
        .map(([uuid, e]) => ({ uuid, account_key: e.accountKey, ...e.body }));
      return { status: 200, body: listed };
    }
    if (endpoint === 'events' || endpoint === 'eventDelete') {
      if (endpoint === 'eventDelete') {
        const uuid = decodeURIComponent(url.pathname.split('/').pop() ?? '');
        const event = events.get(uuid);
        if (!event || event.deleted || event.accountKey !== account.accountKey) return { status: 404, body: { message: 'Not Found' } };
        event.deleted = true;
        return { status: 200, body: { uuid } };
      }
      if (!(req.headers['content-type'] ?? '').toLowerCase().startsWith('application/json'))
        return { status: 400, body: { message: 'json' } };
      let given: Record<string, unknown>;
      try {
        given = JSON.parse(body) as Record<string, unknown>;
      } catch {
        return { status: 400, body: { message: 'Bad Request' } };
      }
      for (const field of ['title', 'description', 'date', 'createdBy']) {
        if (typeof given[field] !== 'string' || given[field] === '') return { status: 400, body: { message: `${field} is required` } };
      }
      const uuid = randomUUID();
      events.set(uuid, { accountKey: account.accountKey, body: given });
      return { status: 201, body: { uuid, account_key: account.accountKey, ...given } };
    }
    if (endpoint === 'costCentersV1') {
      // As the public reference documents it: a bare array, each linked account an object.
      return {
        status: 200,
        body: account.costCenters.map((c) => ({
          id: c.id,
          name: c.name,
          code: c.code ?? '',
          accountId: account.accountId,
          linkedAccounts: (c.v1LinkedAccounts ?? []).map((id) => ({ linkedAccountId: id, linkedAccountName: `Account ${id}` })),
        })),
      };
    }
    const records = account.costCenters.map((c) => ({
      id: c.id,
      name: c.name,
      code: c.code ?? '',
      accountId: account.accountId,
      linkedAccounts: c.linkedAccounts ?? [],
      ...(c.linkedAccountsIds !== undefined ? { linkedAccountsIds: c.linkedAccountsIds } : {}),
    }));
    return page(records, settings.costCentersEnvelope, token);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const body = Buffer.concat(chunks).toString('utf8');
      const record = (status: number): PlatformRequest => {
        const entry: PlatformRequest = {
          method: req.method ?? '',
          path: url.pathname,
          query: Object.fromEntries(url.searchParams),
          headers: req.headers,
          body,
          status,
        };
        requests.push(entry);
        return entry;
      };
      const endpoint = endpointOf(url.pathname, req.method);
      if (!endpoint) {
        record(404);
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
        return;
      }
      const apikey = req.headers['apikey'];
      const payer = typeof apikey === 'string' ? apikey.split(':')[1] : undefined;
      const behaviour = queued.get(endpoint)?.shift() ??
        payerBehaviours.get(`${endpoint}#${payer}`) ??
        behaviours.get(endpoint) ?? { kind: 'normal' };
      let answer: { status: number; body?: unknown; hang?: boolean; headers?: Record<string, string> };
      switch (behaviour.kind) {
        case 'error':
          answer = { status: behaviour.status, body: { message: 'Internal Server Error' } };
          break;
        case 'rate_limited':
          answer = { status: 429, body: { message: 'Too Many Requests' }, headers: { 'retry-after': behaviour.retryAfter } };
          break;
        case 'hang':
          answer = { status: 0, hang: true };
          break;
        case 'answer':
          answer = { status: behaviour.status, body: behaviour.body };
          break;
        case 'redirect':
          answer = { status: behaviour.status, body: {}, headers: { location: behaviour.location } };
          break;
        case 'normal':
          answer = handle(endpoint, req, body, url);
          if (answer.status === 429) answer.headers = { 'retry-after': '1' };
      }
      const entry = record(answer.status);
      if (answer.hang) {
        entry.closed = false;
        res.once('close', () => {
          entry.closed = true;
        });
        hanging.add(res);
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(JSON.stringify(answer.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    username,
    password,
    userKey,
    accounts,
    requests,
    issuedTokens,
    dailyCosts,
    events,
    setBehaviour: (endpoint, behaviour, accountKey) => {
      if (accountKey === undefined) behaviours.set(endpoint, behaviour);
      else payerBehaviours.set(`${endpoint}#${accountKey}`, behaviour);
    },
    queue: (endpoint, behaviour, count = 1) => {
      const list = queued.get(endpoint) ?? [];
      for (let i = 0; i < count; i++) list.push(behaviour);
      queued.set(endpoint, list);
    },
    revokeTokens: () => validTokens.clear(),
    configure: (changes) => {
      settings = { ...settings, ...changes };
    },
    reset: () => {
      behaviours.clear();
      payerBehaviours.clear();
      queued.clear();
      requests.length = 0;
      v2Count = 0;
      settings = {
        accountsEnvelope: options.accountsEnvelope ?? 'data',
        costCentersEnvelope: options.costCentersEnvelope ?? 'array',
        pageSize: options.pageSize,
        rateLimitEvery: options.rateLimitEvery,
      };
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
    close: () => closeServer(server, hanging),
  };
}
