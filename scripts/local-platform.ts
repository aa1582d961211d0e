// `npm start`'s stand-in for the cost platform (docs/platform.md): the cost-trend pictures draw a
// sample series from events/platform/daily-cost.json, and a cost event is printed, not written.
// The real triage function's code does the rest (lib/trend, lib/cost-events, lib/triage).
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as z from 'zod/mini';
import type { CostEventInput, PlatformLoop } from '../lib/cost-api/client.js';
import type { PlatformSession } from '../lib/cost-api/session.js';
import { costEventWriter, memoryCostEventRecords } from '../lib/cost-events/events.js';
import type { Logger } from '../lib/log/logger.js';
import { noMetrics } from '../lib/metrics/metrics.js';
import type { OwnerDirectory } from '../lib/owners/directory.js';
import { memoryTrendStore } from '../lib/trend/store.js';
import { costEventsPort } from '../lib/triage/cost-events.js';
import type { TriagePorts } from '../lib/triage/handle.js';

const sampleSchema = z.object({
  /** Per account: its daily costs, oldest first, the last one the alert's day. */
  accounts: z.record(z.string(), z.array(z.number())),
});

/** The payer every sample account is billed to, as the directory in AWS would name it. */
const LOCAL_PAYER = 'local-payer';

export interface LocalPlatform {
  /** The owners file's directory, each account with the sample payer (the file names cost centers only). */
  owners: OwnerDirectory;
  chart(options: { key: string; logger: Logger }): NonNullable<TriagePorts['chart']>;
  costEvents(options: { enabled(): Promise<boolean>; logger: Logger }): NonNullable<TriagePorts['costEvents']>;
}

export async function localPlatform(file: string, owners: OwnerDirectory, print: (line: string) => void): Promise<LocalPlatform> {
  const sample = sampleSchema.parse(JSON.parse(await readFile(file, 'utf8')));
  const withPayer: OwnerDirectory = {
    async read(accountId, signal) {
      const record = await owners.read(accountId, signal);
      return record && { ...record, routing: record.routing.map((c) => ({ ...c, payer: c.payer ?? LOCAL_PAYER })) };
    },
  };
  const events = new Map<string, CostEventInput>();
  const client: Pick<PlatformLoop, 'dailyCost' | 'createEvent' | 'deleteEvent' | 'listEvents'> & { generateToken(): never } = {
    generateToken() {
      throw new Error('npm start signs in to no platform');
    },
    async dailyCost(_auth, { accountId, from, to }) {
      const costs = sample.accounts[accountId] ?? [];
      const last = Date.parse(`${to}T00:00:00Z`);
      const days = new Map<string, number>();
      costs.forEach((cost, i) => {
        const day = new Date(last - (costs.length - 1 - i) * 86_400_000).toISOString().slice(0, 10);
        if (day >= from) days.set(day, cost);
      });
      return days;
    },
    async createEvent(_auth, event) {
      const uuid = randomUUID();
      events.set(uuid, event);
      print(`cost event that would be written on the platform (POST /api/v1/users/events): ${JSON.stringify(event)}`);
      return uuid;
    },
    async deleteEvent(_auth, uuid) {
      const event = events.get(uuid);
      events.delete(uuid);
      print(`cost event that would be deleted (DELETE /api/v1/users/events/${uuid}): ${event?.title ?? '(unknown)'}`);
    },
    async listEvents() {
      return [...events].map(([uuid, e]) => ({ uuid, title: e.title, description: e.description }));
    },
  };
  const session: PlatformSession = {
    withAuth: (_payer, work) => work({ apikey: 'local', authorization: 'local' }),
  };
  return {
    owners: withPayer,
    chart({ key, logger }) {
      const store = memoryTrendStore();
      let route: Promise<NonNullable<TriagePorts['chart']>> | undefined;
      return async (token, budget) => {
        route ??= import('../lib/trend/lazy-trend.js').then(({ createChartRoute }) =>
          createChartRoute({
            key: async () => key,
            owners: withPayer,
            store,
            platform: { client, session },
            render: () => import('../lib/chart/lazy-chart-render.js'),
            now: Date.now,
            logger,
          }),
        );
        return (await route)(token, budget);
      };
    },
    costEvents({ enabled, logger }) {
      const writer = costEventWriter({
        records: memoryCostEventRecords(),
        owners: withPayer,
        platform: { client, session },
        now: Date.now,
        logger,
      });
      return costEventsPort({ writer: async () => writer, enabled, enqueue: undefined, metrics: noMetrics, logger });
    },
  };
}
