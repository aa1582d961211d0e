/**
 * The project's CloudWatch metrics, in one catalogue. Every dimension value is a word our own
 * code chose (an outcome, a destination type, a reason code, a status): never a URL, a
 * destination name, a secret or message text, so a metric line is safe to log.
 */
export const METRICS_NAMESPACE = 'CostAlertRelay';

export type MetricName =
  /** One destination's fate for one alert (dimensions outcome, destinationType). */
  | 'Deliveries'
  /** Alerts parked in the dead-letter queue for a human (dimension reason). */
  | 'AlertsParked'
  /** Posts made by delivery-retry (dimension destinationType). */
  | 'RetryAttempts'
  /** The relay configuration could not be read: deliveries wait or are refused. */
  | 'ConfigurationUnavailable'
  /** The relay's answers to the platform (dimension status). */
  | 'Answers'
  /** From the request's arrival to the relay's answer. */
  | 'AnswerLatency'
  /** API-key rotation steps (dimensions outcome, step). */
  | 'Rotations'
  /** The dedup table could not be used; the alert was delivered anyway. */
  | 'DedupUnavailable'
  /** Groups of alerts opened, and digests posted when they close (dimension destinationType). */
  | 'GroupsOpened'
  | 'DigestsPosted'
  /** Triage actions taken from chat (dimensions action, destinationType). */
  | 'TriageActions'
  /** Runs of directory-sync (dimension outcome); an alarm watches for a day without a succeeded one. */
  | 'DirectorySyncs'
  /** The relay could not read an account's owner record: that alert was routed without cost centers. */
  | 'OwnerDirectoryUnavailable'
  /** Anomalies escalated, and what else became of their waits (dimensions outcome, destinationType of where they waited). */
  | 'Escalations'
  /** Cost-trend pictures served (dimension outcome: the chart, or why a notice instead). */
  | 'Charts'
  /** Cost events written to or deleted from the platform, or queued to be (dimension outcome). */
  | 'CostEvents'
  /** Weekly summaries (dimensions outcome, destinationType). */
  | 'Summaries';

export type MetricUnit = 'Count' | 'Milliseconds';

export interface MetricPoint {
  name: MetricName;
  unit: MetricUnit;
  value: number;
  /** The full set of dimensions this point is published with. */
  dimensions: Readonly<Record<string, string>>;
  /** Smaller dimension sets CloudWatch also aggregates, so alarms can watch e.g. every parked alert whatever the type. */
  rollups: readonly (readonly string[])[];
}

/** Where metric points go: EMF on stdout in Lambda, an array in tests. */
export interface Metrics {
  add(point: MetricPoint): void;
}

export const noMetrics: Metrics = { add: () => undefined };

const count = (name: MetricName, dimensions: Record<string, string>, rollups: string[][] = []): MetricPoint => ({
  name,
  unit: 'Count',
  value: 1,
  dimensions,
  rollups,
});

/** What became of an alert at one destination, as the dashboards and alarms count it. */
export type DeliveryMetricOutcome = 'delivered' | 'queued' | 'parked' | 'unheld' | 'duplicate' | 'follow_up' | 'grouped' | 'snoozed';

export const deliveryMetric = (outcome: DeliveryMetricOutcome, destinationType: string): MetricPoint =>
  count('Deliveries', { outcome, destinationType }, [['outcome']]);

export const parkedMetric = (reason: string): MetricPoint => count('AlertsParked', { reason }, [[]]);

export const retryAttemptMetric = (destinationType: string): MetricPoint => count('RetryAttempts', { destinationType }, [[]]);

export const configurationUnavailableMetric = (): MetricPoint => count('ConfigurationUnavailable', {});

export const answerMetric = (status: number): MetricPoint => count('Answers', { status: String(status) });

export const answerLatencyMetric = (ms: number): MetricPoint => ({
  name: 'AnswerLatency',
  unit: 'Milliseconds',
  value: Math.max(0, ms),
  dimensions: {},
  rollups: [],
});

export const rotationMetric = (step: string, outcome: 'succeeded' | 'failed'): MetricPoint =>
  count('Rotations', { outcome, step }, [['outcome']]);

export const dedupUnavailableMetric = (): MetricPoint => count('DedupUnavailable', {});

export const groupOpenedMetric = (destinationType: string): MetricPoint => count('GroupsOpened', { destinationType }, [[]]);

export const digestPostedMetric = (destinationType: string): MetricPoint => count('DigestsPosted', { destinationType }, [[]]);

export const triageActionMetric = (action: string, destinationType: string): MetricPoint =>
  count('TriageActions', { action, destinationType }, [['action']]);

/**
 * succeeded: every payer read and every record written; continued: every payer it reached read and
 * written, the rest left for the next run, which starts where it stopped (an organisation larger
 * than one run's reach); partial: some confirmed, some skipped or cut; empty: no payer listed, or
 * no list read named a linked account, so nothing was changed; failed: nothing confirmed.
 */
export const DIRECTORY_SYNC_OUTCOMES = ['succeeded', 'continued', 'partial', 'empty', 'failed'] as const;
export type DirectorySyncOutcome = (typeof DIRECTORY_SYNC_OUTCOMES)[number];

export const directorySyncMetric = (outcome: DirectorySyncOutcome): MetricPoint => count('DirectorySyncs', { outcome });

export const ownerDirectoryUnavailableMetric = (): MetricPoint => count('OwnerDirectoryUnavailable', {});

/**
 * scheduled: an opening started its wait; unscheduled: an opening's wait could not be set (the
 * relay answered 503, so that a re-send sets it); posted: the escalation was delivered or is held
 * for its destination; cancelled: triaged in time (or snoozed where it would go); dropped: nothing
 * left to escalate (a later opening, escalated already, the option removed); failed: it cannot wait
 * here, its destination refused it, or its job failed in delivery-retry.
 */
export type EscalationOutcome = 'scheduled' | 'unscheduled' | 'posted' | 'cancelled' | 'dropped' | 'failed';

export const escalationMetric = (outcome: EscalationOutcome, destinationType: string): MetricPoint =>
  count('Escalations', { outcome, destinationType }, [['outcome']]);

/** posted: a week with anomalies; quiet: the one line of a week without; failed: the chat did not take it, or it could not be built. */
/** `unconfirmed`: the chat answered too late (or not at all) to know; the week is not posted again. */
export type SummaryOutcome = 'posted' | 'quiet' | 'failed' | 'unconfirmed';

export const summaryMetric = (outcome: SummaryOutcome, destinationType: string): MetricPoint =>
  count('Summaries', { outcome, destinationType }, [['outcome']]);

/** What a cost-trend picture showed: the chart, or the notice of why there is none (lib/trend). */
export type ChartMetricOutcome = 'chart' | 'cached' | 'no_owner' | 'no_data' | 'platform_unavailable' | 'busy';

export const chartMetric = (outcome: ChartMetricOutcome): MetricPoint => count('Charts', { outcome });

/** What became of writing or deleting a cost event on the platform (lib/cost-events). */
export type CostEventOutcome = 'written' | 'deleted' | 'queued' | 'failed' | 'skipped' | 'parked';

export const costEventMetric = (outcome: CostEventOutcome): MetricPoint => count('CostEvents', { outcome });
