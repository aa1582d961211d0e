import type { MessageRef } from '../chat/service.js';
import {
  type AnomalyState,
  type AnomalyTriage,
  anomalyStartOf,
  type ClaimOutcome,
  type DeliveryLedger,
  type EscalationLedger,
  type Parking,
  type QueuedClaimOutcome,
  type StoredAnomaly,
  staleCopy,
} from './ledger.js';
import { summaryFields } from './summary-fields.js';
import type { SummaryFields } from './summary-record.js';

/** An anomaly as this ledger keeps it: its state, and its escalation's lease and end (lib/escalation). */
export type MemoryAnomaly = StoredAnomaly & {
  escalatedAt?: number;
  escalationUntil?: number;
  escalationToken?: string;
  escalationUpdates?: number;
  /** The opening whose wait could not be set (its `firstSeen`). */
  escalationUnscheduled?: number;
  /** The opening posted with a way to triage after it waited (its `firstSeen`). */
  openingShown?: number;
};

/** The item as the DynamoDB adapter reads it: what it says of the escalation is the current opening's. */
const storedOf = ({ escalatedAt, escalationUnscheduled, openingShown: _shown, ...item }: MemoryAnomaly): StoredAnomaly => {
  const escalation =
    escalatedAt !== undefined
      ? 'escalated'
      : escalationUnscheduled !== undefined && escalationUnscheduled === item.firstSeen
        ? 'unscheduled'
        : undefined;
  return { ...item, ...(escalation ? { escalation } : {}) };
};

/** One alert at one destination: claimed by an attempt until `claimUntil`, done, or parked as `parking` says. */
export type MemoryEntry = {
  state: 'claimed' | 'delivered' | 'queued' | 'parked';
  claimUntil?: number;
  token?: string;
  parking?: Parking;
};

/**
 * The ledger in this process's memory, with the DynamoDB adapter's rules: for `npm start`, so
 * that a re-send and an anomaly's follow-ups behave locally as they do in the stack. Nothing
 * expires; a local session is short.
 */
export function inMemoryLedger(
  now: () => number = Date.now,
  triageOf?: (anomalyId: string) => AnomalyTriage | undefined,
): DeliveryLedger & {
  entries: Map<string, MemoryEntry>;
  anomalies: Map<string, MemoryAnomaly>;
  /** What a weekly summary shows of each anomaly at a destination with one, as the anomaly item keeps it in AWS. */
  summaries: Map<string, SummaryFields>;
} {
  const entries = new Map<string, MemoryEntry>();
  const anomalies = new Map<string, MemoryAnomaly>();
  const summaries = new Map<string, SummaryFields>();
  const seconds = () => Math.floor(now() / 1000);
  const anomaly = (id: string): AnomalyState => {
    const known = anomalies.get(id);
    return { ...known, firstSeen: known?.firstSeen ?? seconds(), followUps: known?.followUps ?? 0 };
  };
  // Nothing expires here, so there is nothing to keep.
  const escalations: EscalationLedger = {
    async keepAnomaly() {},
    async claimEscalation(id, claim) {
      const item = anomalies.get(id);
      if (item?.firstSeen !== claim.firstSeen) return { kind: 'gone' };
      if (item.escalatedAt !== undefined) return { kind: 'escalated' };
      if (triageOf?.(id) ?? item.triage) return { kind: 'triaged' };
      if (claim.unposted && item.openingShown !== claim.firstSeen) return { kind: 'unshown' };
      const until = item.escalationUntil ?? 0;
      if (item.escalationToken !== claim.token && until >= seconds()) {
        return { kind: 'held', retryAfterSeconds: Math.max(1, until - seconds()) };
      }
      if (claim.updates !== undefined && (item.followUps ?? 0) > claim.updates) return { kind: 'newer' };
      anomalies.set(id, { ...item, escalationUntil: seconds() + claim.holdSeconds, escalationToken: claim.token });
      return { kind: 'claimed' };
    },
    async escalated(id, firstSeen) {
      const item = anomalies.get(id);
      if (item?.firstSeen !== firstSeen) return;
      const { escalationUntil: _until, escalationToken: _token, ...rest } = item;
      anomalies.set(id, { ...rest, escalatedAt: seconds() });
    },
    async waitingEscalation(id, firstSeen) {
      const item = anomalies.get(id);
      return { updates: item?.firstSeen === firstSeen ? (item.escalationUpdates ?? 0) : 0 };
    },
    async escalationWaiting(id, firstSeen, updates) {
      const item = anomalies.get(id);
      if (item?.firstSeen !== firstSeen || (item.escalationUpdates ?? 0) >= updates) return;
      anomalies.set(id, { ...item, escalationUpdates: updates });
    },
    async escalationUnscheduled(id, firstSeen) {
      const item = anomalies.get(id);
      if (item?.firstSeen === firstSeen) anomalies.set(id, { ...item, escalationUnscheduled: firstSeen });
    },
    async escalationScheduled(id, firstSeen) {
      const item = anomalies.get(id);
      if (item?.escalationUnscheduled !== firstSeen) return;
      const { escalationUnscheduled: _unscheduled, ...rest } = item;
      anomalies.set(id, rest);
    },
    async openingShown(id, firstSeen) {
      const item = anomalies.get(id);
      if (item?.firstSeen === firstSeen) anomalies.set(id, { ...item, openingShown: firstSeen });
    },
    async releaseEscalation(id, token) {
      const item = anomalies.get(id);
      if (item?.escalationToken !== token) return;
      const { escalationUntil: _until, escalationToken: _token, ...rest } = item;
      anomalies.set(id, rest);
    },
  };
  return {
    entries,
    anomalies,
    summaries,
    async claim(id, claim): Promise<ClaimOutcome> {
      const entry = entries.get(id);
      if (entry?.state === 'delivered' || entry?.state === 'queued') return { kind: 'done', state: entry.state };
      if (entry?.state === 'claimed' && entry.token !== claim.token && (entry.claimUntil ?? 0) > now()) {
        return { kind: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil(((entry.claimUntil ?? 0) - now()) / 1000)) };
      }
      entries.set(id, { state: 'claimed', claimUntil: now() + claim.holdSeconds * 1000, token: claim.token });
      return { kind: 'claimed' };
    },
    async claimQueued(id, claim): Promise<QueuedClaimOutcome> {
      const entry = entries.get(id);
      if (entry?.state === 'delivered') return { kind: 'done', state: entry.state };
      if (entry?.state === 'parked' && staleCopy(entry.parking, claim.job)) return { kind: 'done', state: entry.state };
      if (entry?.state === 'claimed' && entry.token !== claim.token && (entry.claimUntil ?? 0) > now()) {
        return { kind: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil(((entry.claimUntil ?? 0) - now()) / 1000)) };
      }
      entries.set(id, { state: 'claimed', claimUntil: now() + claim.holdSeconds * 1000, token: claim.token });
      return { kind: 'claimed' };
    },
    async record(id, state) {
      entries.set(id, { state });
    },
    async park(id, { firstAttemptAt, parkToken }) {
      entries.set(id, { state: 'parked', parking: { firstAttemptAt, parkToken } });
    },
    async release(id, token) {
      const entry = entries.get(id);
      if (token ? entry?.token === token : entry?.state !== 'delivered') entries.delete(id);
    },
    async startAnomaly(id, _signal, summary) {
      if (summary) summaries.set(id, summaryFields(summary));
      const stored = anomalies.get(id);
      // Under npm start the triage page's in-memory store holds the triage state, as the anomaly item does in AWS.
      const triage = triageOf?.(id) ?? stored?.triage;
      const start = anomalyStartOf({ ...(stored ? storedOf(stored) : {}), ...(triage ? { triage } : {}) });
      if (start.kind === 'existing') return start;
      const firstSeen = seconds();
      anomalies.set(id, { ...stored, firstSeen, followUps: 0 });
      return { ...start, firstSeen };
    },
    async anomalyOpened(id, opening: MessageRef) {
      anomalies.set(id, { ...anomaly(id), opening });
    },
    async anomalyFollowedUp(id) {
      const state = anomaly(id);
      anomalies.set(id, { ...state, followUps: state.followUps + 1, lastUpdate: seconds() });
    },
    async readAnomaly(id) {
      const stored = anomalies.get(id);
      const triage = triageOf?.(id) ?? stored?.triage;
      const start = anomalyStartOf({ ...stored, ...(triage ? { triage } : {}) });
      return start.kind === 'existing' ? start.state : undefined;
    },
    async forgetAnomaly(id) {
      const state = anomalies.get(id);
      if (!state || state.opening || state.followUps) return;
      if (state.triage) anomalies.set(id, { triage: state.triage });
      else anomalies.delete(id);
    },
    escalations: async () => escalations,
  };
}
