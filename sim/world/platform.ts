import { type FaultPlan, takesPost } from './faults.js';

/**
 * The cost platform in memory, as one fetch: token generation, the payer accounts, each payer's
 * cost centers (v2, and v1 for a payer whose v2 list names no linked account), the daily cost
 * series and cost events. Its data changes as the workload says (accounts move between cost
 * centers, a payer's list empties), and it suffers the faults the plan draws.
 */

export interface SimCostCenter {
  id: number;
  name: string;
  /** Cloud account ids it covers. */
  linked: string[];
}

export interface SimPayer {
  accountKey: number;
  accountId: string;
  accountName: string;
  cloudTypeId: number;
  costCenters: SimCostCenter[];
  /** The v2 list names no linked account (the relay then reads v1). */
  v1Only?: boolean;
}

export interface CostEvent {
  uuid: string;
  accountKey: number;
  title: string;
  date: string;
  description: string;
  createdBy: string;
  deleted?: number;
}

export interface SimPlatform {
  fetch: typeof globalThis.fetch;
  payers: SimPayer[];
  /** While true, the payer-account list answers empty (the directory must not call that a success). */
  emptyPayerList: boolean;
  events: CostEvent[];
  /** Daily cost per cloud account, for the trend pictures. */
  dailyCost(accountId: string, day: string): number;
  /** Requests by endpoint, for the counts. */
  requests: Map<string, number>;
  /** Requests that met a fault since the last call (the simulation reads it per directory run). */
  takeFaultCount(): number;
  /** Which cost centers (ids and names) cover each account, as the platform holds them now. */
  coverage(): Map<string, Array<{ id: string; name: string; accountKey: number }>>;
  readonly username: string;
  readonly password: string;
}

const USER_KEY = 'simuserkey0001';

export function simPlatform(options: { now: () => number; faults: FaultPlan; latencyMs: () => number; payers: SimPayer[] }): SimPlatform {
  const requests = new Map<string, number>();
  const events: CostEvent[] = [];
  let faultCount = 0;
  let eventCounter = 0;
  const username = 'sim-user';
  const password = 'sim-password-not-a-secret-elsewhere';
  const tokens = new Set<string>();

  const respond = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(body === undefined ? null : JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

  const wait = (ms: number, signal: AbortSignal | null | undefined) =>
    new Promise<void>((resolve, reject) => {
      const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : undefined;
      if (signal?.aborted) reject(signal.reason);
      signal?.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });

  const payerOf = (apikey: string | null): SimPayer | undefined => {
    const key = Number(apikey?.split(':')[1]);
    return platform.payers.find((payer) => payer.accountKey === key);
  };

  const handle = (method: string, url: URL, headers: Headers, body: string): Response => {
    const path = url.pathname;
    if (path === '/api/v1/authentication/token/generate' && method === 'POST') {
      const given = JSON.parse(body || '{}') as { username?: string; password?: string };
      if (given.username !== username || given.password !== password)
        return respond(401, { Error: 'Failed Retrieving Authentication Token' });
      const token = `eyJhbGciOiJub25lIn0.${Buffer.from(JSON.stringify({ exp: Math.floor(options.now() / 1000) + 86_400 })).toString('base64url')}.sim${tokens.size}`;
      tokens.add(token);
      return respond(200, { Authorization: token, apikey: `${USER_KEY}:-1:null` });
    }
    if (!tokens.has(headers.get('authorization') ?? '')) return respond(401, { message: 'Unauthorized' });
    if (path === '/api/v2/user-management/accounts/data-access/payer-accounts') {
      const list = platform.emptyPayerList ? [] : platform.payers;
      return respond(200, {
        data: list.map(({ accountKey, accountId, accountName, cloudTypeId }) => ({ accountKey, accountId, accountName, cloudTypeId })),
      });
    }
    const payer = payerOf(headers.get('apikey'));
    if (path === '/api/v2/user-management/cost-centers/management/list') {
      if (!payer) return respond(403, { message: 'Forbidden' });
      return respond(200, {
        data: payer.costCenters.map((cc) => ({
          id: cc.id,
          name: cc.name,
          ...(payer.v1Only ? {} : { linkedAccounts: cc.linked.map((id) => ({ linkedAccountId: id })) }),
        })),
      });
    }
    if (path === '/api/v1/users/cost-centers') {
      if (!payer) return respond(403, { message: 'Forbidden' });
      return respond(
        200,
        payer.costCenters.map((cc) => ({
          id: cc.id,
          name: cc.name,
          code: '',
          accountId: payer.accountId,
          linkedAccounts: cc.linked.map((id) => ({ linkedAccountId: id, linkedAccountName: id })),
        })),
      );
    }
    if (path === '/api/v2/invoices/cost-and-usage') {
      if (!payer) return respond(403, { message: 'Forbidden' });
      const account = url.searchParams.get('filters[linkedaccid]') ?? '';
      const start = Date.parse(`${url.searchParams.get('startDate')}T00:00:00Z`);
      const end = Date.parse(`${url.searchParams.get('endDate')}T00:00:00Z`);
      const rows = [];
      for (let t = start; t <= end; t += 86_400_000) {
        const day = new Date(t).toISOString().slice(0, 10);
        rows.push({ usage_date: day, account_id: account, total_cost: platform.dailyCost(account, day) });
      }
      return respond(200, { data: rows, nextToken: null });
    }
    if (path === '/api/v1/users/events' && method === 'POST') {
      if (!payer) return respond(403, { message: 'Forbidden' });
      const given = JSON.parse(body || '{}') as Record<string, string>;
      const event: CostEvent = {
        uuid: `ev-${++eventCounter}`,
        accountKey: payer.accountKey,
        title: String(given['title'] ?? ''),
        date: String(given['date'] ?? ''),
        description: String(given['description'] ?? ''),
        createdBy: String(given['createdBy'] ?? ''),
      };
      events.push(event);
      return respond(201, { ...event, account_key: payer.accountKey });
    }
    if (path === '/api/v1/users/events' && method === 'GET') {
      if (!payer) return respond(403, { message: 'Forbidden' });
      const [from, to] = [url.searchParams.get('startDate') ?? '', url.searchParams.get('endDate') ?? ''];
      const listed = events.filter((e) => e.accountKey === payer.accountKey && e.deleted === undefined && e.date >= from && e.date <= to);
      return respond(
        200,
        listed.map((e) => ({ ...e, account_key: e.accountKey })),
      );
    }
    const deleting = /^\/api\/v1\/users\/events\/([^/]+)$/.exec(path);
    if (deleting && method === 'DELETE') {
      const event = events.find((e) => e.uuid === deleting[1] && e.deleted === undefined);
      if (!event) return respond(404, { message: 'Not found' });
      event.deleted = options.now();
      return respond(200, { uuid: event.uuid });
    }
    return respond(404, { message: 'Not found' });
  };

  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init?.method ?? 'GET';
    const headers = new Headers(init?.headers);
    const body = typeof init?.body === 'string' ? init.body : '';
    const endpoint = url.pathname.replace(/\/[^/]*\d[^/]*$/, '/:id');
    requests.set(endpoint, (requests.get(endpoint) ?? 0) + 1);
    (globalThis as { __simTrace?: (line: string) => void }).__simTrace?.(`platform ${method} ${url.pathname} ${url.search}`);
    const fault = options.faults.next(`platform:${endpoint}`);
    if (fault !== 'none') faultCount += 1;
    if (fault === 'hang') {
      await wait(Number.POSITIVE_INFINITY, init?.signal);
    }
    await wait(options.latencyMs(), init?.signal);
    if (fault === 'throttle') return respond(429, { message: 'Too Many Requests' }, { 'retry-after': '1' });
    if (fault === 'unavailable') return respond(503, { message: 'Service Unavailable' });
    const answer = handle(method, url, headers, body);
    if (fault === 'late') await wait(Number.POSITIVE_INFINITY, init?.signal);
    if (fault === 'lost' && takesPost(fault)) throw new TypeError('fetch failed');
    return answer;
  }) as typeof globalThis.fetch;

  const platform: SimPlatform = {
    fetch,
    payers: options.payers,
    emptyPayerList: false,
    events,
    requests,
    username,
    password,
    takeFaultCount() {
      const count = faultCount;
      faultCount = 0;
      return count;
    },
    dailyCost(accountId, day) {
      // A steady cost per account with a weekly rhythm, and a spike on days the workload marks.
      const base = (Number(accountId.slice(-3)) % 200) + 50;
      const weekday = new Date(`${day}T00:00:00Z`).getUTCDay();
      return Math.round(base * (weekday === 0 || weekday === 6 ? 0.6 : 1) * 100) / 100;
    },
    coverage() {
      const out = new Map<string, Array<{ id: string; name: string; accountKey: number }>>();
      for (const payer of platform.payers) {
        for (const cc of payer.costCenters) {
          for (const account of cc.linked) {
            const list = out.get(account) ?? [];
            list.push({ id: String(cc.id), name: cc.name, accountKey: payer.accountKey });
            out.set(account, list);
          }
        }
      }
      return out;
    },
  };
  return platform;
}
