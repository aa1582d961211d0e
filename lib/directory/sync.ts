import { formatApiKey } from '../cost-api/api-key.js';
import type { CostApiClient, CostCenterCoverageReader, CostCenterListVersion, Credentials, GeneratedToken } from '../cost-api/client.js';
import { CostApiError } from '../cost-api/errors.js';
import type { PayerAccount } from '../cost-api/schema.js';
import type { Logger } from '../log/logger.js';
import { type DirectorySyncOutcome, directorySyncMetric, type Metrics } from '../metrics/metrics.js';
import { type OwnerStore, sharedIds } from '../owners/directory.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorName, errorReason, ReasonedError } from '../shared/errors.js';
import { mergedRecord, namesLinkedAccounts, ownerRecords, type PayerCoverage, payerIndexOf, withoutReadPayers } from './coverage.js';
import type { SyncCursor } from './cursor.js';
import type { LastRunStore } from './last-run.js';
import type { PayerIndex, PayerIndexStore } from './payer-index.js';

/** What directory-sync asks of the platform: sign in, the payer accounts, and each payer's cost centers. */
export interface DirectoryPlatform extends Pick<CostApiClient, 'generateToken' | 'listPayerAccounts'>, CostCenterCoverageReader {}

export interface DirectorySyncLimits {
  /** Kept free for writing what was read: reading stops early rather than eat into it. */
  writeReserveMs: number;
  /** A platform call is not begun with less time than this left to it. */
  callFloorMs: number;
  /** The credentials secret's read. */
  secretMs: number;
  /** One record's write (with the read before it, when there is one), a payer index's read or write, or the cursor's, at most. */
  writeMs: number;
  /** A write is not begun with less time than this left to it. */
  writeFloorMs: number;
  /** Writes in flight at once. */
  writeConcurrency: number;
}

const DEFAULT_DIRECTORY_SYNC_LIMITS: DirectorySyncLimits = {
  writeReserveMs: 15_000,
  callFloorMs: 2_000,
  secretMs: 10_000,
  writeMs: 3_000,
  writeFloorMs: 300,
  writeConcurrency: 4,
};

export interface DirectorySyncDependencies {
  platform: DirectoryPlatform;
  readCredentials(signal: AbortSignal): Promise<Credentials>;
  store: OwnerStore;
  cursor: SyncCursor;
  /** What each payer covered when last read whole: how a run finds the accounts a payer no longer covers. */
  payerIndex: PayerIndexStore;
  /** Where the run's outcome is kept for `npm run owners`; nowhere by default. */
  lastRun?: LastRunStore;
  /** How long the next platform request would wait for its place within the platform's pace. */
  paceDelayMs?: () => number;
  logger: Logger;
  metrics: Metrics;
  now?: () => number;
  limits?: Partial<DirectorySyncLimits>;
}

/** A payer whose accounts this run left as they were, and why, in words. */
export interface SkippedPayer {
  /** The platform's account key. */
  payer: string;
  payerName: string;
  reason: string;
  why: string;
}

export interface DirectorySyncSummary {
  outcome: DirectorySyncOutcome;
  /** Why nothing could be read at all (signing in, the payer accounts), when that is so. */
  reason?: string;
  payers: number;
  payersRead: number;
  payersSkipped: number;
  /** Which payers, and why. */
  skipped: SkippedPayer[];
  /** Payers whose v2 list named no linked account, read from the v1 list instead. */
  v1Fallbacks: number;
  accountsWritten: number;
  /** Accounts that lost a read payer's part because that payer's lists no longer cover them (their record went when no part was left). */
  accountsRemoved: number;
  /** Records (written or to be cut down) that could not be, for lack of time or a failed write. */
  accountsNotWritten: number;
  /** Cost centers that an account's record could not hold (DynamoDB's item size). */
  costCentersLeftOut: number;
  /** Payers read whole whose index could not be read or kept: accounts they stopped covering keep their part until a later run. */
  payersNotIndexed: number;
}

/** The run stopped before it read a payer; nothing about the platform's answer. */
class RunStoppedError extends ReasonedError<'out_of_time' | 'rate_limited'> {}

const nothingDone = {
  payers: 0,
  payersRead: 0,
  payersSkipped: 0,
  skipped: [],
  v1Fallbacks: 0,
  accountsWritten: 0,
  accountsRemoved: 0,
  accountsNotWritten: 0,
  costCentersLeftOut: 0,
  payersNotIndexed: 0,
} satisfies Omit<DirectorySyncSummary, 'outcome'>;

/** A run that confirmed nothing, for the reason given. */
export const failedRun = (reason: string): DirectorySyncSummary => ({ outcome: 'failed', reason, ...nothingDone });

/** The index of a payer that could not be read: its old accounts are not known in this run. */
const UNREADABLE = Symbol('unreadable');

const seconds = (ms: number) => Math.floor(ms / 1000);

/** Words for a log line: our own errors say what failed; anything else is named by its class. */
const whyOf = (error: unknown): string => (error instanceof ReasonedError ? error.message : `unexpected ${errorName(error)}`);

/**
 * directory-sync: reads which of the platform's cost centers cover each cloud account (spec
 * 4.1-4.4 with the key `<user_key>:<accountKey>:`) and writes one `owner#<account>` record per
 * account. It only ever writes what it read in this run: a payer it could not read writes
 * nothing, so that payer's accounts keep their records until they expire, and an account it
 * shares with a payer that was read keeps that payer's part. A payer read whole no longer covers
 * the accounts its index named that its lists do not: they lose its part at once (the record goes
 * when no part is left). A run that finds no payer, or no linked account at all, changes nothing.
 */
export function createDirectorySync(deps: DirectorySyncDependencies): (budget: InvocationBudget) => Promise<DirectorySyncSummary> {
  const limits = { ...DEFAULT_DIRECTORY_SYNC_LIMITS, ...deps.limits };
  const now = deps.now ?? Date.now;
  const paceDelayMs = deps.paceDelayMs ?? (() => 0);
  const { platform, logger: log } = deps;

  /** A platform call, given what is left of the invocation less the write reserve, if that is enough to begin. */
  function platformStep<T>(budget: InvocationBudget, name: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const wait = paceDelayMs();
    if (!budget.fits(wait + limits.callFloorMs + limits.writeReserveMs)) {
      const why =
        wait > limits.callFloorMs
          ? 'not read: the platform’s pace leaves no room for it in this invocation'
          : 'not read: too little of the invocation’s time was left';
      return Promise.reject(new RunStoppedError(why, 'out_of_time'));
    }
    return budget.step(name, budget.remainingMs(), work, limits.writeReserveMs);
  }

  async function readPayer(
    budget: InvocationBudget,
    token: GeneratedToken,
    payer: PayerAccount,
  ): Promise<PayerCoverage & { source: CostCenterListVersion }> {
    const auth = {
      apikey: formatApiKey({ userKey: token.userKey, accountKey: payer.accountKey, costCenterId: '' }),
      authorization: token.authorization,
    };
    const read = (version: CostCenterListVersion) =>
      platformStep(budget, version === 'v1' ? 'cost_centers_v1' : 'cost_centers', (signal) =>
        platform.listCostCenterCoverage(auth, version, { signal }),
      );
    const v2 = await read('v2');
    if (namesLinkedAccounts(v2)) return { payer, readAt: seconds(now()), costCenters: v2, source: 'v2' };
    log.info('the v2 cost-center list names no linked account; reading the v1 list instead', {
      payer: payer.accountKey,
      payerName: payer.accountName,
      costCenters: v2.length,
    });
    const v1 = await read('v1');
    return { payer, readAt: seconds(now()), costCenters: v1, source: 'v1' };
  }

  /**
   * Each item's work, a few at a time while the invocation has time for another; the reasons of
   * those not done, counted. `work` answers false for an item it decided to leave as it was.
   */
  async function each<T>(
    budget: InvocationBudget,
    step: string,
    items: readonly T[],
    work: (item: T, signal: AbortSignal) => Promise<boolean | undefined>,
  ): Promise<{ done: T[]; left: Array<{ item: T; reason: string }> }> {
    const queue = [...items];
    const done: T[] = [];
    const left: Array<{ item: T; reason: string }> = [];
    const worker = async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
        if (!budget.fits(limits.writeFloorMs)) {
          left.push({ item, reason: 'out_of_time' });
          continue;
        }
        try {
          const result = await budget.step(step, limits.writeMs, (signal) => work(item as T, signal));
          if (result !== false) done.push(item);
        } catch (error) {
          left.push({ item, reason: errorReason(error) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, limits.writeConcurrency) }, worker));
    return { done, left };
  }

  const countReasons = (left: ReadonlyArray<{ reason: string }>, into: Map<string, number>) => {
    for (const { reason } of left) into.set(reason, (into.get(reason) ?? 0) + 1);
  };

  /** Every listed payer's index; UNREADABLE where one could not be read, undefined where there is none. */
  async function readIndexes(
    budget: InvocationBudget,
    keys: readonly string[],
  ): Promise<Map<string, PayerIndex | typeof UNREADABLE | undefined>> {
    const indexes = new Map<string, PayerIndex | typeof UNREADABLE | undefined>(keys.map((key) => [key, UNREADABLE]));
    const { left } = await each(budget, 'payer_index_read', keys, async (key, signal) => {
      indexes.set(key, await deps.payerIndex.read(key, signal));
      return true;
    });
    for (const { item, reason } of left) {
      log.warn('what a payer covered before is unknown: accounts it no longer covers keep its part for now', { payer: item, reason });
    }
    return indexes;
  }

  async function run(budget: InvocationBudget): Promise<DirectorySyncSummary> {
    let token: GeneratedToken;
    let payers: PayerAccount[];
    try {
      const credentials = await budget.step('credentials_read', limits.secretMs, (signal) => deps.readCredentials(signal));
      token = await platformStep(budget, 'token_generate', (signal) => platform.generateToken(credentials, { signal }));
      payers = await platformStep(budget, 'payer_accounts', (signal) =>
        platform.listPayerAccounts({ apikey: token.apikey, authorization: token.authorization }, { signal }),
      );
    } catch (error) {
      log.error('directory sync read nothing: every record stays as it was', { reason: errorReason(error), why: whyOf(error) });
      return failedRun(errorReason(error));
    }

    if (payers.length === 0) {
      log.error('the platform lists no payer account: every record stays as it was', { reason: 'no_payer_accounts' });
      return { outcome: 'empty', reason: 'no_payer_accounts', ...nothingDone };
    }

    let cursor: string | undefined;
    try {
      cursor = await budget.step('cursor_read', limits.writeMs, (signal) => deps.cursor.read(signal));
    } catch (error) {
      log.warn('where the last run stopped is unknown: reading from the first payer', { reason: errorReason(error), why: whyOf(error) });
    }
    const start = Math.max(
      0,
      payers.findIndex((p) => p.accountKey === cursor),
    );
    if (start > 0) log.info('reading from the payer where the last run stopped', { payer: cursor });

    const read: Array<PayerCoverage & { source: CostCenterListVersion }> = [];
    const skipped: SkippedPayer[] = [];
    let stop: RunStoppedError | undefined;
    let stoppedAt: string | undefined;
    for (const payer of [...payers.slice(start), ...payers.slice(0, start)]) {
      const skip = (reason: string, why: string) => {
        skipped.push({ payer: payer.accountKey, payerName: payer.accountName, reason, why });
        log.warn('payer skipped: its accounts keep their records as they were', {
          payer: payer.accountKey,
          payerName: payer.accountName,
          reason,
          why,
        });
      };
      if (stop) {
        skip(stop.reason, stop.message);
        continue;
      }
      try {
        const coverage = await readPayer(budget, token, payer);
        read.push(coverage);
        log.info('payer read', {
          payer: payer.accountKey,
          payerName: payer.accountName,
          list: coverage.source,
          costCenters: coverage.costCenters.length,
        });
      } catch (error) {
        skip(errorReason(error), whyOf(error));
        if (error instanceof RunStoppedError) stop = error;
        // The platform says it is asked too often: more requests now would only make that worse.
        else if (error instanceof CostApiError && error.reason === 'rate_limited') {
          stop = new RunStoppedError('not read: the platform answered an earlier list with 429 (too many requests)', 'rate_limited');
        }
        if (stop) stoppedAt = payer.accountKey;
      }
    }
    // Kept before the records are written, so that a run whose writes take all its time still
    // moves the next one on.
    let cursorKept = true;
    if (stoppedAt !== undefined && stoppedAt !== cursor) {
      const next = stoppedAt;
      try {
        await budget.step('cursor_write', limits.writeMs, (signal) => deps.cursor.write(next, signal));
      } catch (error) {
        cursorKept = false;
        log.warn('where this run stopped was not kept: the next run starts where this one did', {
          reason: errorReason(error),
          why: whyOf(error),
        });
      }
    }

    const base = {
      payers: payers.length,
      payersRead: read.length,
      payersSkipped: skipped.length,
      skipped,
      v1Fallbacks: read.filter((r) => r.source === 'v1').length,
    };
    if (read.length === 0) return { outcome: 'failed', ...nothingDone, ...base };
    if (!read.some((r) => namesLinkedAccounts(r.costCenters))) {
      // A platform that answers with empty lists must not empty the directory: nothing is changed,
      // and the run is no success, so that the stale-directory alarm sees it.
      log.error('no cost-center list read names a linked account: every record stays as it was', {
        reason: 'no_linked_accounts',
        payersRead: read.length,
      });
      return { ...nothingDone, ...base, outcome: 'empty', reason: 'no_linked_accounts' };
    }

    const readKeys = new Set(read.map((r) => r.payer.accountKey));
    const unread = new Set(payers.map((p) => p.accountKey).filter((key) => !readKeys.has(key)));
    const indexes = await readIndexes(
      budget,
      payers.map((p) => p.accountKey),
    );
    const fresh = new Map(read.map((r) => [r.payer.accountKey, payerIndexOf(r)]));
    // Ids are shared among every payer this run read, and those it keeps parts of from before.
    const shared = sharedIds(
      payers.flatMap((p) => {
        const known = fresh.get(p.accountKey) ?? indexes.get(p.accountKey);
        return known && known !== UNREADABLE ? known.costCenters : [];
      }),
    );

    const { records, paddedIds, leftOut } = ownerRecords(read, shared);
    const notWritten = new Map<string, number>();
    const writes = await each(budget, 'owner_write', records, async (record, signal) => {
      const merged = unread.size > 0 ? mergedRecord(record, await deps.store.read(record.accountId, signal), unread, shared) : record;
      if (!merged) throw new ReasonedError('a record without payers names cost centers this run did not', 'record_without_payers');
      await deps.store.write(merged, signal);
      return true;
    });
    countReasons(writes.left, notWritten);

    // Accounts a read payer's index named that no list read in this run covers any more.
    const covered = new Set(records.map((r) => r.accountId));
    const gone = [
      ...new Set(
        read.flatMap((r) => {
          const before = indexes.get(r.payer.accountKey);
          return before && before !== UNREADABLE ? before.accounts.filter((account) => !covered.has(account)) : [];
        }),
      ),
    ].sort();
    const removals = await each(budget, 'owner_remove', gone, async (accountId, signal) => {
      const change = withoutReadPayers(await deps.store.read(accountId, signal), unread, shared);
      if (change.change === 'keep') return false;
      if (change.change === 'remove') await deps.store.remove(accountId, signal);
      else await deps.store.write(change.record, signal);
      return true;
    });
    countReasons(removals.left, notWritten);
    const notRemoved = new Set(removals.left.map((l) => l.item));

    // Kept once the records are: an account whose removal failed stays in it, to be tried again.
    const indexed = read.filter((r) => indexes.get(r.payer.accountKey) !== UNREADABLE);
    const indexWrites = await each(budget, 'payer_index_write', indexed, async (coverage, signal) => {
      const index = fresh.get(coverage.payer.accountKey) as PayerIndex;
      const before = indexes.get(coverage.payer.accountKey);
      const pending = before && before !== UNREADABLE ? before.accounts.filter((account) => notRemoved.has(account)) : [];
      await deps.payerIndex.write(
        coverage.payer.accountKey,
        { ...index, accounts: [...new Set([...index.accounts, ...pending])].sort() },
        signal,
      );
      return true;
    });
    for (const { item, reason } of indexWrites.left) {
      log.warn('what a payer covers was not kept: accounts it stops covering keep its part until a later run keeps it', {
        payer: item.payer.accountKey,
        reason,
      });
    }
    const payersNotIndexed = read.length - indexWrites.done.length;

    const accountsNotWritten = writes.left.length + removals.left.length;
    if (accountsNotWritten > 0) {
      log.warn('owner records not written: those accounts keep their records as they were', {
        accounts: accountsNotWritten,
        reasons: Object.fromEntries(notWritten),
      });
    }
    if (removals.done.length > 0) {
      log.info('accounts no longer covered by a payer read lost its cost centers', { accounts: removals.done.length });
    }
    if (leftOut > 0) {
      log.warn('cost centers a record cannot hold were left out: the account has more than one item holds', { costCenters: leftOut });
    }
    if (paddedIds > 0) {
      log.info('AWS account ids shorter than twelve digits were given back their leading zeros', { accountIds: paddedIds });
    }
    const nothingConfirmed = records.length > 0 && writes.done.length === 0;
    // Payers left only for lack of time are the next run's first, once the cursor says so: the
    // directory still moves through every payer, and the stale alarm counts such a run as renewal.
    const onlyLeftForNextRun = cursorKept && skipped.every((s) => s.reason === 'out_of_time');
    const outcome: DirectorySyncOutcome = nothingConfirmed
      ? 'failed'
      : accountsNotWritten > 0 || leftOut > 0 || payersNotIndexed > 0 || !onlyLeftForNextRun
        ? 'partial'
        : skipped.length > 0
          ? 'continued'
          : 'succeeded';
    return {
      outcome,
      ...base,
      accountsWritten: writes.done.length,
      accountsRemoved: removals.done.length,
      accountsNotWritten,
      costCentersLeftOut: leftOut,
      payersNotIndexed,
    };
  }

  /** For `npm run owners`: when this run ended and how. A run whose outcome is not kept is still counted and logged. */
  async function keepLastRun(budget: InvocationBudget, summary: DirectorySyncSummary): Promise<void> {
    const { lastRun } = deps;
    if (!lastRun) return;
    const { outcome, payers, payersRead, payersSkipped, accountsWritten, accountsRemoved, accountsNotWritten } = summary;
    const run = { at: seconds(now()), outcome, payers, payersRead, payersSkipped, accountsWritten, accountsRemoved, accountsNotWritten };
    try {
      await budget.step('last_run_write', limits.writeMs, (signal) => lastRun.write(run, signal));
    } catch (error) {
      log.warn('this run’s outcome was not kept for npm run owners', { reason: errorReason(error), why: whyOf(error) });
    }
  }

  return async (budget) => {
    let summary: DirectorySyncSummary;
    try {
      summary = await run(budget);
    } catch (error) {
      // A fault of ours: counted and logged like any failed run, so the alarm still sees it.
      log.error('directory sync failed unexpectedly', { reason: errorReason(error), why: whyOf(error) });
      summary = failedRun('unexpected_error');
    }
    deps.metrics.add(directorySyncMetric(summary.outcome));
    const level = summary.outcome === 'failed' || summary.outcome === 'empty' ? 'error' : summary.outcome === 'partial' ? 'warn' : 'info';
    log[level]('directory sync finished', { ...summary });
    await keepLastRun(budget, summary);
    return summary;
  };
}
