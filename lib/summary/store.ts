import type { AnomalyTriage, StoredAnomaly } from '../dedup/ledger.js';
import type { SummaryFields } from '../dedup/summary-record.js';
import type { SummaryRecord } from './view.js';

/** Where a destination's anomaly records are read: the dedup table's summary index in AWS. */
export interface SummaryRecords {
  /** The anomalies at `destination` first seen at or after `fromSeconds`. */
  since(destination: string, fromSeconds: number, signal?: AbortSignal): Promise<SummaryRecord[]>;
}

/**
 * The one summary a week per destination: a run takes the week before it posts, so that runs
 * however many post it once; a failed post gives it back, so that the next run tries again.
 * A posted week keeps where its summary ended, so that the next week's starts there.
 */
export interface SummaryWeeks {
  /** False when the week's summary is posted, or another run holds it right now (for at most `holdSeconds`). */
  take(destination: string, week: string, take: { token: string; holdSeconds: number }, signal?: AbortSignal): Promise<boolean>;
  /** Marks the week posted, with the end of what its summary covered (epoch seconds: the run's time). */
  posted(destination: string, week: string, coveredTo: number, signal?: AbortSignal): Promise<void>;
  /** Where the week's posted summary ended (epoch seconds); undefined when it is not posted or that is not recorded. */
  coveredTo(destination: string, week: string, signal?: AbortSignal): Promise<number | undefined>;
  /** Gives back this run's hold only, never a later run's or a posted week. */
  release(destination: string, week: string, token: string, signal?: AbortSignal): Promise<void>;
}

/**
 * How long a taken week is remembered: past the next week's slot and catch-up time (at most
 * 7 days, an hour of clock change and CATCH_UP_HOURS after this week's post), so that the next
 * week's summary reads where this one ended; and the week's key is never met again in time.
 */
export const WEEK_KEPT_SECONDS = 8 * 86_400;

/** The item that holds one destination's week (`summary#<destination>#<ISO week>`). */
export const weekItemId = (destination: string, week: string): string => `summary#${destination}#${week}`;

/**
 * The records of `npm start`: the in-memory ledger's anomalies, with what the summary shows of
 * each, and the triage state the local triage page keeps.
 */
export function memorySummaryRecords(
  ledger: { anomalies: ReadonlyMap<string, StoredAnomaly>; summaries: ReadonlyMap<string, SummaryFields> },
  triageOf: (id: string) => AnomalyTriage | undefined = () => undefined,
): SummaryRecords {
  return {
    async since(destination, fromSeconds) {
      return [...ledger.summaries].flatMap(([id, fields]) => {
        const stored = ledger.anomalies.get(id);
        if (fields.destination !== destination || stored?.firstSeen === undefined || stored.firstSeen < fromSeconds) return [];
        const triage = triageOf(id) ?? stored.triage;
        return [
          {
            id,
            title: fields.title,
            accountId: fields.accountId,
            accountName: fields.accountName,
            origin: fields.origin,
            thread: fields.thread,
            firstSeen: stored.firstSeen,
            followUps: stored.followUps ?? 0,
            ...(triage ? { triage } : {}),
          },
        ];
      });
    },
  };
}

/** The weeks taken in this process: for `npm start` and tests, with the table's rules. */
export function memorySummaryWeeks(
  now: () => number = Date.now,
): SummaryWeeks & { weeks: Map<string, { token?: string; until?: number; coveredTo?: number }> } {
  const weeks = new Map<string, { token?: string; until?: number; coveredTo?: number }>();
  return {
    weeks,
    async take(destination, week, { token, holdSeconds }) {
      const id = weekItemId(destination, week);
      const held = weeks.get(id);
      if (held && (held.until === undefined || held.until > now())) return false;
      weeks.set(id, { token, until: now() + holdSeconds * 1000 });
      return true;
    },
    async posted(destination, week, coveredTo) {
      weeks.set(weekItemId(destination, week), { coveredTo });
    },
    async coveredTo(destination, week) {
      return weeks.get(weekItemId(destination, week))?.coveredTo;
    },
    async release(destination, week, token) {
      const id = weekItemId(destination, week);
      if (weeks.get(id)?.token === token) weeks.delete(id);
    },
  };
}
