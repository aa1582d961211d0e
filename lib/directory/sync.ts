import { formatApiKey } from '../cost-api/api-key.js';
import type { CostApiClient, CostCenterCoverageReader, CostCenterListVersion, Credentials, GeneratedToken } from '../cost-api/client.js';
import { CostApiError } from '../cost-api/errors.js';
import type { PayerAccount } from '../cost-api/schema.js';
import type { Logger } from '../log/logger.js';
import { COST_CENTER_LIMITS } from '../message/cost-center.js';
import { type DirectorySyncOutcome, directorySyncMetric, type Metrics } from '../metrics/metrics.js';
import type { OwnerRecord, OwnerStore } from '../owners/directory.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorName, errorReason, ReasonedError } from '../shared/errors.js';
import { mergedRecord, namesLinkedAccounts, ownerRecords, type PayerCoverage } from './coverage.js';
import type { SyncCursor } from './cursor.js';

/** What directory-sync asks of the platform: sign in, the payer accounts, and each payer's cost centers. */
export interface DirectoryPlatform extends Pick<CostApiClient, 'generateToken' | 'listPayerAccounts'>, CostCenterCoverageReader {}

export interface DirectorySyncLimits {
  /** Kept free for writing what was read: reading stops early rather than eat into it. */
  writeReserveMs: number;
  /** A platform call is not begun with less time than this left to it. */
  callFloorMs: number;
  /** The credentials secret's read. */
  secretMs: number;
  /** One record's write (with the read before it, when there is one), or the cursor's read or write, at most. */
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
  accountsNotWritten: number;
}

/** The run stopped before it read a payer; nothing about the platform's answer. */
class RunStoppedError extends ReasonedError<'out_of_time' | 'rate_limited'> {}

/** A run that confirmed nothing, for the reason given. */
export const failedRun = (reason: string): DirectorySyncSummary => ({
  outcome: 'failed',
  reason,
  payers: 0,
  payersRead: 0,
  payersSkipped: 0,
  skipped: [],
  v1Fallbacks: 0,
  accountsWritten: 0,
  accountsNotWritten: 0,
});

const seconds = (ms: number) => Math.floor(ms / 1000);

/** Words for a log line: our own errors say what failed; anything else is named by its class. */
const whyOf = (error: unknown): string => (error instanceof ReasonedError ? error.message : `unexpected ${errorName(error)}`);

/**
 * directory-sync: reads which of the platform's cost centers cover each cloud account (spec
 * 4.1-4.4 with the key `<user_key>:<accountKey>:`) and writes one `owner#<account>` record per
 * account. It only ever writes what it read in this run: a payer it could not read writes
 * nothing, so that payer's accounts keep their records until they expire, and an account it
 * shares with a payer that was read keeps that payer's part; nothing is deleted.
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
   * Writes a few at a time while the invocation has time for another; counts what was not written
   * and why. When some payers were not read, each record first takes their parts from the stored one.
   */
  async function writeAll(
    budget: InvocationBudget,
    records: OwnerRecord[],
    unread: ReadonlySet<string>,
  ): Promise<{ written: number; notWritten: Map<string, number> }> {
    const queue = [...records];
    const notWritten = new Map<string, number>();
    let written = 0;
    const miss = (reason: string) => notWritten.set(reason, (notWritten.get(reason) ?? 0) + 1);
    const worker = async () => {
      for (let record = queue.shift(); record; record = queue.shift()) {
        if (!budget.fits(limits.writeFloorMs)) {
          miss('out_of_time');
          continue;
        }
        try {
          const done = await budget.step('owner_write', limits.writeMs, async (signal) => {
            const merged = unread.size > 0 ? mergedRecord(record, await deps.store.read(record.accountId, signal), unread) : record;
            if (merged) await deps.store.write(merged, signal);
            return merged !== undefined;
          });
          if (done) written++;
          else miss('record_without_payers');
        } catch (error) {
          miss(errorReason(error));
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, limits.writeConcurrency) }, worker));
    return { written, notWritten };
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

    const { records, paddedIds, leftOut } = ownerRecords(read);
    const readKeys = new Set(read.map((r) => r.payer.accountKey));
    const unread = new Set(payers.map((p) => p.accountKey).filter((key) => !readKeys.has(key)));
    const { written, notWritten } = await writeAll(budget, records, unread);
    const accountsNotWritten = [...notWritten.values()].reduce((a, b) => a + b, 0);
    if (accountsNotWritten > 0) {
      log.warn('owner records not written: those accounts keep their records as they were', {
        accounts: accountsNotWritten,
        reasons: Object.fromEntries(notWritten),
      });
    }
    if (leftOut > 0) {
      // A queued retry carries no more of them (lib/message/cost-center.ts), so no record keeps more.
      log.warn('cost centers a record cannot hold were left out: an id too long, or too many for one account', {
        costCenters: leftOut,
        limits: COST_CENTER_LIMITS,
      });
    }
    if (paddedIds > 0) {
      log.info('AWS account ids shorter than twelve digits were given back their leading zeros', { accountIds: paddedIds });
    }
    const nothingConfirmed = (payers.length > 0 && read.length === 0) || (records.length > 0 && written === 0);
    // Payers left only for lack of time are the next run's first, once the cursor says so: the
    // directory still moves through every payer, and the stale alarm counts such a run as renewal.
    const onlyLeftForNextRun = cursorKept && skipped.every((s) => s.reason === 'out_of_time');
    const outcome: DirectorySyncOutcome = nothingConfirmed
      ? 'failed'
      : accountsNotWritten > 0 || !onlyLeftForNextRun
        ? 'partial'
        : skipped.length > 0
          ? 'continued'
          : 'succeeded';
    return {
      outcome,
      payers: payers.length,
      payersRead: read.length,
      payersSkipped: skipped.length,
      skipped,
      v1Fallbacks: read.filter((r) => r.source === 'v1').length,
      accountsWritten: written,
      accountsNotWritten,
    };
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
    const level = summary.outcome === 'failed' ? 'error' : summary.outcome === 'partial' ? 'warn' : 'info';
    log[level]('directory sync finished', { ...summary });
    return summary;
  };
}
