import * as z from 'zod/mini';
import { snoozeHolds } from '../dedup/ledger.js';
import { TRIAGE, TRIAGE_ACTIONS, TRIAGE_STATES, type TriageAction } from '../vocabulary/triage.js';

export const triageActionSchema = z.enum(TRIAGE_ACTIONS);

/** An anomaly's triage state at one destination; ids, names and times only, never alert text. */
export const triageStateSchema = z.object({
  state: z.enum(TRIAGE_STATES),
  /** Epoch seconds when a snooze ends. */
  until: z.optional(z.number()),
  by: z.optional(z.string()),
  at: z.optional(z.number()),
});
export type TriageState = z.infer<typeof triageStateSchema>;

/** One audit entry: who did what and when. */
export interface TriageAudit {
  who: string;
  action: TriageAction;
  at: number;
}

export const OPEN: TriageState = { state: 'open' };

/** The state an action leads to; the audit entry records it whatever the state was before. */
export function applyTriage(action: TriageAction, who: string, nowSeconds: number): TriageState {
  const entry: { state: TriageState['state']; holdsSeconds?: number } = TRIAGE[action];
  return {
    state: entry.state,
    ...(entry.holdsSeconds !== undefined ? { until: nowSeconds + entry.holdsSeconds } : {}),
    by: who,
    at: nowSeconds,
  };
}

/** The state as it stands now: a snooze that has ended is open again (the relay's rule, snoozeHolds). */
export function effectiveState(state: TriageState, nowSeconds: number): TriageState {
  return state.state === 'snoozed' && !snoozeHolds(state, nowSeconds) ? { state: 'open' } : state;
}

/**
 * The audit entries an item keeps, the latest last: enough to see who did what lately, while
 * an item that is clicked without end still stays far below the table's item size.
 */
export const AUDIT_KEPT = 20;

/** What an action leaves on an anomaly's item: its state and audit list. */
export interface TriageChange {
  state: TriageState;
  audit: TriageAudit[];
}

/**
 * What an action changes, or undefined when it repeats the state as it stands (acknowledging
 * what is acknowledged, snoozing what is snoozed, reopening what is open): such a click or POST
 * changes nothing, so it adds no audit entry and posts no follow-up.
 */
export function nextTriage(
  current: { triage: TriageState; audit: readonly TriageAudit[] } | undefined,
  action: TriageAction,
  who: string,
  nowSeconds: number,
  /** Only an anomaly that is open now changes (an action on every open one of a digest): someone's decision stays. */
  onlyOpen = false,
): TriageChange | undefined {
  const state = applyTriage(action, who, nowSeconds);
  const now = effectiveState(current?.triage ?? OPEN, nowSeconds).state;
  if (now === state.state || (onlyOpen && now !== OPEN.state)) return undefined;
  return { state, audit: [...(current?.audit ?? []), { who, action, at: nowSeconds }].slice(-AUDIT_KEPT) };
}
