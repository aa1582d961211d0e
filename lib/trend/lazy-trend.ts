// Imported with import() by the triage function for `GET /chart/<token>` alone, and bundled on its
// own: the triage page's cold start parses none of it, and its rasteriser is a chunk of its own again.
import { platformCredentialsIn } from '../api-key/credentials.js';
import type { AwsJsonCall } from '../aws/json-client.js';
import type { DayCost } from '../chart/svg.js';
import { type CostApiClient, createCostApiClient, type PlatformLoop } from '../cost-api/client.js';
import { type PlatformSession, platformSession } from '../cost-api/session.js';
import type { Logger } from '../log/logger.js';
import { type OwnerDirectory, payerOf } from '../owners/directory.js';
import { dynamoOwnerDirectory } from '../owners/dynamodb.js';
import { type InvocationBudget, invocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { verifyChartToken } from '../triage-link/chart.js';
import { accountLabel } from '../triage-link/sign.js';
import { dynamoTrendStore, type TrendSeries, type TrendStore } from './store.js';

/** The days a picture shows, up to and with the anomaly's day. */
export const TREND_DAYS = 30;
/** A picture is answered within this, whatever the platform does (a chat shows none that comes later). */
export const CHART_ANSWER_MS = 3_000;
/** What reading the series may take, so that drawing it (or the notice) still fits the answer's time. */
const DATA_BUDGET_MS = 1_900;
/** The platform allows about 40 requests in 3 minutes per login: a container keeps to half. */
const PLATFORM_WINDOW = { requests: 20, ms: 180_000 };

export interface ChartRoutePorts {
  /** The triage key the picture's link was signed with; undefined when the stack has none (404). */
  key(signal: AbortSignal): Promise<string | undefined>;
  /** Which payer's account key reads the account's cost (the owner directory). */
  owners: OwnerDirectory;
  store: TrendStore;
  platform: { session: PlatformSession; client: Pick<CostApiClient, 'generateToken'> & Pick<PlatformLoop, 'dailyCost'> };
  render(): Promise<typeof import('../chart/lazy-chart-render.js')>;
  now: () => number;
  logger: Logger;
  /** Counts each picture by what it shows (`chart`, or why a notice). */
  count?(outcome: ChartOutcome): void;
}

export type ChartOutcome = 'chart' | 'cached' | 'no_owner' | 'no_data' | 'platform_unavailable' | 'busy';
/** Why a picture shows words instead of a chart. */
type NoticeOutcome = Exclude<ChartOutcome, 'chart' | 'cached'>;

export interface ChartAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded?: boolean;
}

const text = (statusCode: number, body: string): ChartAnswer => ({
  statusCode,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' },
  body,
});

/** The 30 days up to `last` (`YYYY-MM-DD`), oldest first. */
export function trendDays(last: string): string[] {
  const end = Date.parse(`${last}T00:00:00Z`);
  return Array.from({ length: TREND_DAYS }, (_, i) => new Date(end - (TREND_DAYS - 1 - i) * 86_400_000).toISOString().slice(0, 10));
}

const NOTICES: Record<NoticeOutcome, string> = {
  no_owner: 'The owner directory does not know this account yet.',
  no_data: 'The cost platform has no daily cost for this account.',
  platform_unavailable: 'The cost platform did not answer in time; open the picture again later.',
  busy: 'Many pictures were asked for at once; open this one again in a minute.',
};

/** `GET /chart/<token>`: the picture of the account's daily cost, or one that says why there is none. */
export function createChartRoute(ports: ChartRoutePorts) {
  const { logger: log } = ports;
  const asked: number[] = [];
  const roomAtPlatform = (): boolean => {
    const t = ports.now();
    while (asked.length > 0 && (asked[0] as number) <= t - PLATFORM_WINDOW.ms) asked.shift();
    if (asked.length >= PLATFORM_WINDOW.requests) return false;
    asked.push(t);
    return true;
  };

  /** The account's series: from the table when a picture of that day was drawn already (`cached`), else from the platform (and kept). */
  async function series(
    accountId: string,
    day: string,
    budget: InvocationBudget,
  ): Promise<{ series: TrendSeries; outcome: 'chart' | 'cached' } | NoticeOutcome> {
    const kept = await budget.step('trend_store', 500, (signal) => ports.store.read(accountId, day, signal)).catch(() => undefined);
    if (kept) return { series: kept, outcome: 'cached' };
    const owner = await budget.step('owner_directory', 500, (signal) => ports.owners.read(accountId, signal)).catch(() => undefined);
    const payer = payerOf(owner);
    if (!payer) return 'no_owner';
    if (!roomAtPlatform()) return 'busy';
    const days = trendDays(day);
    try {
      const costs = await budget.step('cost_platform', DATA_BUDGET_MS, (signal) =>
        ports.platform.session.withAuth(
          payer,
          (auth) => ports.platform.client.dailyCost(auth, { accountId, from: days[0] as string, to: day }, { signal }),
          { signal },
        ),
      );
      if (costs.size === 0) return 'no_data';
      const found: TrendSeries = { days: days.map((d): DayCost => ({ day: d, cost: costs.get(d) })), currency: 'USD' };
      // Kept before the answer, within its own short time: Lambda freezes the container once the
      // handler returns, so a write left running behind the answer may never reach the table.
      await budget
        .step('trend_store', 500, (signal) => ports.store.write(accountId, day, found, signal))
        .catch((error: unknown) => {
          log.warn('could not keep a cost series; the next picture of it asks the platform again', { reason: errorReason(error) });
        });
      return { series: found, outcome: 'chart' };
    } catch (error) {
      log.warn('cost platform did not give the series for a picture', { reason: errorReason(error) });
      return 'platform_unavailable';
    }
  }

  return async (token: string, invocation: InvocationBudget): Promise<ChartAnswer> => {
    // A chat waits a few seconds for a picture: the answer's time is that, or less when the invocation has less.
    const end = ports.now() + CHART_ANSWER_MS;
    const budget = invocationBudget({ getRemainingTimeInMillis: () => Math.min(invocation.remainingMs(), end - ports.now()) }, 300);
    const key = await budget.step('triage_key', 600, ports.key).catch(() => undefined);
    if (key === undefined) return text(404, 'Not found.');
    const reading = verifyChartToken(key, token, ports.now());
    if (!reading.ok) {
      log.warn('refused a picture link', { reason: reading.reason });
      return text(403, 'This picture link is not valid (or has expired).');
    }
    const { a: accountId, d: day, n: name } = reading.token;
    const title = accountLabel(name, accountId);
    const renderer = ports.render();
    const found = await series(accountId, day, budget);
    const { renderTrend, renderNotice } = await renderer;
    ports.count?.(typeof found === 'string' ? found : found.outcome);
    const png =
      typeof found === 'string'
        ? await renderNotice(title, NOTICES[found])
        : await renderTrend({ title, days: found.series.days, marked: day, currency: found.series.currency });
    return {
      statusCode: 200,
      headers: {
        'content-type': 'image/png',
        // A day's picture changes little; a notice should not outlive the trouble it tells of.
        'cache-control': typeof found === 'string' ? 'no-store' : 'private, max-age=3600',
        'x-content-type-options': 'nosniff',
      },
      body: Buffer.from(png).toString('base64'),
      isBase64Encoded: true,
    };
  };
}

/** What the triage function's wiring hands over: its clients and settings, so this chunk builds the rest. */
export interface ChartWiring {
  key(signal: AbortSignal): Promise<string | undefined>;
  dynamo: AwsJsonCall;
  tableName: string;
  secrets: AwsJsonCall;
  credentialsSecretId: string;
  baseUrl: string;
  now: () => number;
  logger: Logger;
  count?(outcome: ChartOutcome): void;
}

/** The chart route as the deployed triage function runs it: the owner directory and series in the table, the platform's login from its secret. */
export function chartRouteFrom(wiring: ChartWiring) {
  // One attempt within the picture's own time: a picture that comes late is worth less than one that says why.
  const client = createCostApiClient({ baseUrl: wiring.baseUrl, timeoutMs: DATA_BUDGET_MS, maxAttempts: 1, logger: wiring.logger });
  const credentials = platformCredentialsIn(wiring.secrets, wiring.credentialsSecretId);
  return createChartRoute({
    key: wiring.key,
    owners: dynamoOwnerDirectory(wiring.dynamo, wiring.tableName, wiring.now),
    store: dynamoTrendStore(wiring.dynamo, wiring.tableName, wiring.now),
    platform: { client, session: platformSession({ client, credentials, now: wiring.now }) },
    render: () => import('../chart/lazy-chart-render.js'),
    now: wiring.now,
    logger: wiring.logger,
    ...(wiring.count ? { count: wiring.count } : {}),
  });
}
