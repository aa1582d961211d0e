/**
 * The triage vocabulary, defined once: every action someone can take on an anomaly at one
 * destination, the state it leads to, its button label and how a message says it was done.
 * Schemas, stores, buttons, the page and the follow-ups derive their lists from here.
 */
export const TRIAGE = {
  acknowledge: { state: 'acknowledged', label: 'Acknowledge', done: 'Acknowledged', marks: true },
  expected: { state: 'expected', label: 'Expected', done: 'Marked expected', marks: true },
  snooze: { state: 'snoozed', label: 'Snooze 24 h', done: 'Snoozed for 24 h', marks: false, holdsSeconds: 24 * 3600 },
  reopen: { state: 'open', label: 'Reopen', done: 'Reopened', marks: false },
} as const;

export type TriageAction = keyof typeof TRIAGE;
export type TriageStateName = (typeof TRIAGE)[TriageAction]['state'];
/** The decisions a follow-up is marked with ("Acknowledged by …"); a snooze holds the alert back instead. */
export type MarkedState = {
  [A in TriageAction]: (typeof TRIAGE)[A]['marks'] extends true ? (typeof TRIAGE)[A]['state'] : never;
}[TriageAction];

const entries = Object.entries(TRIAGE) as Array<[TriageAction, (typeof TRIAGE)[TriageAction]]>;

export const TRIAGE_ACTIONS = entries.map(([action]) => action) as [TriageAction, ...TriageAction[]];
export const TRIAGE_STATES = entries.map(([, { state }]) => state) as [TriageStateName, ...TriageStateName[]];
export const MARKED_STATES = entries.flatMap(([, { state, marks }]) => (marks ? [state] : [])) as [MarkedState, ...MarkedState[]];

/** The action that leads back to open: the only one offered once something was decided. */
export const REOPEN: TriageAction = 'reopen';
/** What a message offers while the anomaly is open: every action but reopening it. */
export const OPEN_ACTIONS = TRIAGE_ACTIONS.filter((action) => action !== REOPEN);

/** How long a snooze holds: nothing of the anomaly is posted to that destination before it ends. */
export const SNOOZE_SECONDS = TRIAGE.snooze.holdsSeconds;

export const isMarked = (state: string): state is MarkedState => (MARKED_STATES as readonly string[]).includes(state);

const DONE = new Map<string, string>(
  entries.flatMap(([action, { state, done }]) => [
    [action, done],
    [state, done],
  ]),
);

/** How a message says an action, or the state it led to, was done: "Acknowledged", "Snoozed for 24 h". */
export const doneLabel = (what: TriageAction | TriageStateName): string => DONE.get(what) ?? what;
