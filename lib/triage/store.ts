import type { MessageRef } from '../chat/service.js';
import type { TriageAction } from '../vocabulary/triage.js';
import { nextTriage, type TriageAudit, type TriageChange, type TriageState } from './state.js';

/** What the table holds of one anomaly at one destination for triage. */
export interface TriageRecord {
  triage: TriageState;
  audit: TriageAudit[];
  opening?: MessageRef;
  /** When the anomaly was first seen at the destination (epoch seconds), where the item says. */
  firstSeen?: number;
}

/** What became of an action: applied, or a repeat of the state as it stands, which changes nothing. */
export type TriageOutcome = { kind: 'applied'; change: TriageChange } | { kind: 'unchanged' };

/** Triage state on the anomaly's item in the dedup table (`anomaly#…`). */
export interface TriageStore {
  read(anomalyId: string, signal?: AbortSignal): Promise<TriageRecord | undefined>;
  /**
   * Applies `action` by `who` at `nowSeconds` unless it repeats the current state (`nextTriage`);
   * with `onlyOpen`, only to an anomaly that is open now.
   */
  apply(
    anomalyId: string,
    action: TriageAction,
    who: string,
    nowSeconds: number,
    signal?: AbortSignal,
    onlyOpen?: boolean,
  ): Promise<TriageOutcome>;
  /**
   * Remembers a signed request until `untilSeconds`; false when it was seen before, in this
   * container or any other, so a captured Slack click cannot be replayed.
   */
  firstUse(key: string, untilSeconds: number, signal?: AbortSignal): Promise<boolean>;
}

/**
 * For `npm start` and tests: the same semantics, in Maps. `openingOf` tells where an anomaly's
 * opening message is (npm start's in-memory ledger), which the table's item holds beside the
 * triage state.
 */
export function memoryTriageStore(
  now: () => number = Date.now,
  openingOf?: (anomalyId: string) => MessageRef | undefined,
): TriageStore & { records: Map<string, TriageRecord> } {
  const records = new Map<string, TriageRecord>();
  const used = new Map<string, number>();
  return {
    records,
    async read(id) {
      const record = records.get(id);
      const opening = openingOf?.(id);
      return record && opening ? { ...record, opening } : record;
    },
    async apply(id, action, who, nowSeconds, _signal, onlyOpen) {
      const known = records.get(id);
      const change = nextTriage(known, action, who, nowSeconds, onlyOpen);
      if (!change) return { kind: 'unchanged' };
      records.set(id, { ...known, triage: change.state, audit: change.audit });
      return { kind: 'applied', change };
    },
    async firstUse(key, untilSeconds) {
      const nowSeconds = Math.floor(now() / 1000);
      for (const [seen, until] of used) if (until < nowSeconds) used.delete(seen);
      if (used.has(key)) return false;
      used.set(key, untilSeconds);
      return true;
    },
  };
}
