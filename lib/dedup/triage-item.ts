import { TRIAGE_STATES, type TriageStateName } from '../vocabulary/triage.js';
import type { AnomalyTriage } from './ledger.js';

/** The attributes in which an anomaly item keeps what someone decided (the triage function writes them). */
export interface TriageAttributes {
  triage?: { S?: string } | undefined;
  triageBy?: { S?: string } | undefined;
  triageAt?: { N?: string } | undefined;
  triageUntil?: { N?: string } | undefined;
}

const seconds = (attribute: { N?: string } | undefined): number | undefined => {
  const value = Number(attribute?.N);
  return attribute?.N !== undefined && Number.isFinite(value) ? value : undefined;
};

/** An anomaly item's triage state, as the relay, delivery-retry and the summary read it; none for a state we do not know. */
export function triageOfItem(item: TriageAttributes | undefined): AnomalyTriage | undefined {
  const state = item?.triage?.S;
  if (state === undefined || !(TRIAGE_STATES as readonly string[]).includes(state)) return undefined;
  const by = item?.triageBy?.S;
  const at = seconds(item?.triageAt);
  const until = seconds(item?.triageUntil);
  return {
    state: state as TriageStateName,
    ...(by !== undefined ? { by } : {}),
    ...(at !== undefined ? { at } : {}),
    ...(until !== undefined ? { until } : {}),
  };
}
