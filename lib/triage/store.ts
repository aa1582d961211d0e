import type { MessageRef } from '../chat/service.js';
import type { TriageAudit, TriageState } from './state.js';

/** What the table holds of one anomaly at one destination for triage. */
export interface TriageRecord {
  triage: TriageState;
  audit: TriageAudit[];
  opening?: MessageRef;
}

/** Triage state on the anomaly's item in the dedup table (`anomaly#…`). */
export interface TriageStore {
  read(anomalyId: string, signal?: AbortSignal): Promise<TriageRecord | undefined>;
  /** Writes the new state and appends the audit entry in one write. */
  apply(anomalyId: string, state: TriageState, entry: TriageAudit, signal?: AbortSignal): Promise<void>;
}

/** For `npm start` and tests: the same semantics, in a Map. */
export function memoryTriageStore(): TriageStore & { records: Map<string, TriageRecord> } {
  const records = new Map<string, TriageRecord>();
  return {
    records,
    async read(id) {
      return records.get(id);
    },
    async apply(id, state, entry) {
      const known = records.get(id);
      records.set(id, { ...known, triage: state, audit: [...(known?.audit ?? []), entry] });
    },
  };
}
