import { type AnomalyTriage, snoozeHolds } from '../dedup/ledger.js';
import type { SummaryAnomaly, SummaryWeek } from '../format/summary.js';
import { accountLabel } from '../triage-link/sign.js';
import { TRIAGE_STATES, type TriageStateName } from '../vocabulary/triage.js';

/** What a summary asked for now covers: the anomalies first seen in these days before it (a scheduled one starts where last week's ended). */
export const SUMMARY_DAYS = 7;

/** One anomaly at one destination as its item keeps it for the summary (lib/dedup/summary-record.ts). */
export interface SummaryRecord {
  /** Its record id (`anomaly#…`), which its Triage link names. */
  id: string;
  title: string;
  accountId: string;
  accountName: string;
  /** The origin its latest delivery arrived on; its Triage link leads there. */
  origin?: string | undefined;
  /** Its thread at the destination (Google Chat), carried by its Triage link. */
  thread?: string | undefined;
  /** Epoch seconds. */
  firstSeen: number;
  followUps: number;
  triage?: AnomalyTriage | undefined;
}

/** "Name (id)", or whichever of the two is known: as a link's page shows the account. */
export const accountOf = (record: Pick<SummaryRecord, 'accountId' | 'accountName'>): string =>
  accountLabel(record.accountName, record.accountId);

/** Its state now: a snooze that has ended is open again (the relay's rule, snoozeHolds), as is one never triaged. */
export function stateOf(triage: AnomalyTriage | undefined, nowSeconds: number): TriageStateName {
  if (!triage) return 'open';
  if (triage.state === 'snoozed' && !snoozeHolds(triage, nowSeconds)) return 'open';
  return triage.state;
}

/**
 * The anomalies a summary covers, epoch seconds: those first seen after `from` until `to`. Where
 * one week's `to` is the next one's `from`, every anomaly belongs to exactly one of them.
 */
export interface SummaryWindow {
  from: number;
  to: number;
}

/** The SUMMARY_DAYS before `nowSeconds`. */
export const daysBefore = (nowSeconds: number): SummaryWindow => ({ from: nowSeconds - SUMMARY_DAYS * 86_400, to: nowSeconds });

/**
 * One destination's week from its anomaly records: those first seen in `window`, counted by
 * their state at `nowSeconds`, the open ones first (the longest open first), then the ones
 * someone triaged (the earliest first). `linkOf` gives an open anomaly its Triage link, where
 * the destination's messages carry links.
 */
export function summaryWeek(
  destination: string,
  timeZone: string,
  records: readonly SummaryRecord[],
  window: SummaryWindow,
  nowSeconds: number,
  linkOf: (record: SummaryRecord) => string | undefined = () => undefined,
): SummaryWeek {
  const { from, to } = window;
  const counts = Object.fromEntries(TRIAGE_STATES.map((state) => [state, 0])) as Record<TriageStateName, number>;
  const anomalies = records
    .filter((record) => record.firstSeen > from && record.firstSeen <= to)
    .map((record) => {
      const state = stateOf(record.triage, nowSeconds);
      counts[state] += 1;
      const { triage } = record;
      // Who left it open says nothing here: an open line tells its age and updates.
      const decided = state !== 'open' && triage ? { by: triage.by, at: triage.at, until: triage.until } : {};
      const link = state === 'open' ? linkOf(record) : undefined;
      const anomaly: SummaryAnomaly = {
        id: record.id,
        title: record.title,
        account: accountOf(record),
        accountId: record.accountId,
        ...(record.accountName ? { accountName: record.accountName } : {}),
        firstSeen: record.firstSeen,
        updates: record.followUps,
        state,
        ...decided,
        ...(link ? { link } : {}),
      };
      return anomaly;
    })
    .sort((a, b) => Number(b.state === 'open') - Number(a.state === 'open') || a.firstSeen - b.firstSeen);
  return { destination, from, to, asOf: nowSeconds, timeZone, counts, anomalies };
}
