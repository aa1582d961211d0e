import type { AwsJsonCall } from '../aws/json-client.js';
import type { DayCost } from '../chart/svg.js';

/**
 * An account's daily cost as the platform gave it for one picture's day, kept so that later
 * requests of the same picture that day call the platform no more (`trend#<account>#<day>` in
 * the dedup table; no key, no token, only days and figures).
 */
export interface TrendSeries {
  days: DayCost[];
  currency: string;
}

export interface TrendStore {
  read(accountId: string, day: string, signal?: AbortSignal): Promise<TrendSeries | undefined>;
  write(accountId: string, day: string, series: TrendSeries, signal?: AbortSignal): Promise<void>;
}

/** A series is asked for once a day per account: kept two days, so that a picture opened late that day still finds it. */
export const TREND_KEPT_SECONDS = 2 * 86_400;

export const trendItemId = (accountId: string, day: string): string => `trend#${accountId}#${day}`;

type Attribute = { S?: string; N?: string; M?: Record<string, Attribute>; NULL?: boolean };

export function dynamoTrendStore(dynamo: AwsJsonCall, tableName: string, now: () => number = Date.now): TrendStore {
  return {
    async read(accountId, day, signal) {
      const output = await dynamo('GetItem', { TableName: tableName, Key: { id: { S: trendItemId(accountId, day) } } }, signal);
      const item = output['Item'] as Record<string, Attribute> | undefined;
      if (!item || Number(item['expiresAt']?.N ?? 0) < Math.floor(now() / 1000)) return undefined;
      const figures = item['days']?.M ?? {};
      const days = Object.keys(figures)
        .sort()
        .map((d) => {
          const value = figures[d]?.N;
          return { day: d, cost: value === undefined ? undefined : Number(value) };
        });
      return { days, currency: item['currency']?.S ?? 'USD' };
    },
    async write(accountId, day, series, signal) {
      await dynamo(
        'PutItem',
        {
          TableName: tableName,
          Item: {
            id: { S: trendItemId(accountId, day) },
            days: { M: Object.fromEntries(series.days.map((d) => [d.day, d.cost === undefined ? { NULL: true } : { N: String(d.cost) }])) },
            currency: { S: series.currency },
            expiresAt: { N: String(Math.floor(now() / 1000) + TREND_KEPT_SECONDS) },
          },
        },
        signal,
      );
    },
  };
}

/** `npm start` and the tests: series in memory. */
export function memoryTrendStore(): TrendStore & { items: Map<string, TrendSeries> } {
  const items = new Map<string, TrendSeries>();
  return {
    items,
    read: async (accountId, day) => items.get(trendItemId(accountId, day)),
    write: async (accountId, day, series) => {
      items.set(trendItemId(accountId, day), series);
    },
  };
}
