// Loaded with import() by the relay, with the first delivery that needs an owner record (the
// stack keeps the directory, or the configuration routes by cost center); bundled on its own (a
// lazy-*.ts module), so a relay that needs neither never parses it.
import type { AwsJsonCall } from '../aws/json-client.js';
import type { Logger } from '../log/logger.js';
import { type Metrics, ownerDirectoryUnavailableMetric } from '../metrics/metrics.js';
import type { InvocationBudget } from '../shared/deadline.js';
import type { AccountOwners, OwnerDirectory } from './directory.js';
import { dynamoOwnerDirectory } from './dynamodb.js';

/** The most an owner read may take: it sits before routing, and a slow one only costs the cost-center routes. */
const OWNER_READ_BUDGET_MS = 800;
/** Accounts remembered per container; the oldest goes first. */
const CACHED_ACCOUNTS = 1_000;

export interface OwnerLookupOptions {
  /** The dedup table, where directory-sync writes; or a directory given directly (npm start's owners file). */
  dynamo?: AwsJsonCall | undefined;
  tableName?: string | undefined;
  directory?: OwnerDirectory | undefined;
  /** No longer than the configuration is cached: a changed directory applies as soon as a changed route would. */
  ttlSeconds: number;
  now: () => number;
  logger: Logger;
  /** Counts each read that failed, for the alarm: those alerts went where routes without cost centers send them. */
  metrics: Metrics;
  errorReason(error: unknown): string;
}

/** The cost centers of an account, or undefined when they are unknown; never throws, never waits past its step. */
export type OwnerLookup = (accountId: string, budget: InvocationBudget) => Promise<AccountOwners | undefined>;

export function createOwnerLookup(options: OwnerLookupOptions): OwnerLookup {
  const directory =
    options.directory ??
    (options.dynamo && options.tableName ? dynamoOwnerDirectory(options.dynamo, options.tableName, options.now) : undefined);
  const cache = new Map<string, { at: number; owners: AccountOwners | undefined }>();
  return async (accountId, budget) => {
    if (!directory) return undefined;
    const known = cache.get(accountId);
    if (known && options.now() - known.at < options.ttlSeconds * 1000) return known.owners;
    try {
      const record = await budget.step('owner_directory', OWNER_READ_BUDGET_MS, (signal) => directory.read(accountId, signal));
      const owners = record?.routing.length ? record : undefined;
      cache.delete(accountId);
      if (cache.size >= CACHED_ACCOUNTS) cache.delete(cache.keys().next().value as string);
      cache.set(accountId, { at: options.now(), owners });
      return owners;
    } catch (error) {
      // Routes by cost center do not match; the alert goes where the others or default send it.
      options.logger.warn('owner directory unavailable; routing without cost centers', { reason: options.errorReason(error) });
      options.metrics.add(ownerDirectoryUnavailableMetric());
      return undefined;
    }
  };
}
