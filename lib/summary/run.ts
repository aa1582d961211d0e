import { randomUUID } from 'node:crypto';
import type { ChatService, PostOutcome } from '../chat/service.js';
import type { LoadedConfig } from '../config/load.js';
import type { Destination, RelayConfig } from '../config/schema.js';
import { CONFIG_READ_BUDGET_MS } from '../config/store.js';
import type { SummaryWeek } from '../format/summary.js';
import type { Logger } from '../log/logger.js';
import { type Metrics, summaryMetric } from '../metrics/metrics.js';
import { addressOf, type ChatServices, destinationType, kindOf, serviceFor } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason, ReasonedError } from '../shared/errors.js';
import { isHttpsOrLoopbackUrl } from '../transport/allowed-url.js';
import { triageLink } from '../triage-link/sign.js';
import { type DueSummary, dueWeek, type SummarySchedule } from './due.js';
import type { SummaryRequest } from './event.js';
import type { SummaryRecords, SummaryWeeks } from './store.js';
import { accountOf, daysBefore, type SummaryRecord, type SummaryWindow, stateOf, summaryWeek } from './view.js';

export interface SummaryPorts {
  /** The relay configuration, read as the other functions read it (cached, validated). */
  config(): LoadedConfig | Promise<LoadedConfig>;
  records: SummaryRecords;
  weeks: SummaryWeeks;
  /** The key that signs Triage links; undefined when the stack has none, and then summaries carry no links. */
  linkKey(signal: AbortSignal): Promise<string | undefined>;
  services: ChatServices;
  /** The most one post may take; less when the invocation has less left. */
  postTimeoutMs: number;
  logger: Logger;
  metrics: Metrics;
  now: () => number;
}

/** What became of one destination's summary in a run. */
export interface DestinationSummary {
  destination: string;
  /**
   * `already_posted`: this week's is posted, or another run is posting it right now.
   * `unconfirmed`: the post went out, but its answer came too late (or was lost) to know whether the
   * chat took it; it is not posted again, as a second copy is worse than a summary that may be missing.
   */
  outcome: 'posted' | 'quiet' | 'failed' | 'not_due' | 'already_posted' | 'unconfirmed';
  /** The anomalies of its week, for a posted summary. */
  anomalies?: number;
  /** Why it failed, as a word (`http_404`, `timeout`, …): never a URL or a secret. */
  reason?: string;
}

/** A run's answer: one entry per destination with a summary; `error` when the run could do nothing. */
export interface SummaryAnswer {
  summaries: DestinationSummary[];
  error?: string;
}

/**
 * How far a scheduled week ends before its run: the summaries index is eventually consistent, so
 * an anomaly first seen in these last moments may not show in it yet. It is named by next week's
 * summary instead, which starts where this one ended, rather than by neither.
 */
export const INDEX_SETTLE_SECONDS = 120;

/** What the table calls around a post may take: taking the week, reading where last week's ended, and marking it posted or giving it back. */
const WEEK_CALL_BUDGET_MS = 2_000;
/** Reading one destination's week of anomalies, page by page. */
const RECORDS_BUDGET_MS = 10_000;
const LINK_KEY_BUDGET_MS = 3_000;

/**
 * Post outcomes that leave open whether the chat took the post: its answer did not come in time,
 * or the connection broke after the post was sent.
 */
const UNCONFIRMED_REASONS = new Set(['timeout', 'network_error']);

/** A destination of a kind that takes no summary: the configuration refuses one there. */
class SummaryNotTakenError extends ReasonedError {}

type Summarised = Destination & { summary: SummarySchedule };
const hasSummary = (destination: Destination): destination is Summarised => destination.summary !== undefined;

/** Why a request for summaries now names destinations that cannot have one; undefined when every name can. */
function namingProblems(config: RelayConfig, names: readonly string[]): string | undefined {
  const problems = names.flatMap((name) => {
    const destination = Object.hasOwn(config.destinations, name) ? config.destinations[name] : undefined;
    if (!destination) return [`"${name}" is not a destination`];
    return hasSummary(destination) ? [] : [`"${name}" has no "summary" option`];
  });
  return problems.length > 0 ? `summaryFor: ${problems.join('; ')}. Nothing was posted.` : undefined;
}

/**
 * The summary function: on the hourly schedule, posts each destination's weekly summary when its
 * weekday and hour have come in its time zone, once a week however often it runs; asked for
 * named destinations, posts theirs now, whatever the day (and without using up the week's).
 */
export function createSummaryRun(ports: SummaryPorts) {
  const { logger: log, metrics } = ports;

  /** Signs a Triage link to an open anomaly, as the relay's messages carry them (lib/triage-link). */
  const linker = (key: string | undefined, name: string, nowMs: number) => (record: SummaryRecord) => {
    if (key === undefined || record.origin === undefined || !isHttpsOrLoopbackUrl(record.origin)) return undefined;
    const fields = { a: record.id, d: name, t: record.title, c: accountOf(record), ...(record.thread ? { k: record.thread } : {}) };
    return triageLink(record.origin, key, fields, nowMs);
  };

  async function post(
    service: ChatService,
    destination: Destination,
    payload: unknown,
    botToken: string | undefined,
    budget: InvocationBudget,
  ) {
    // Room is left for marking the week afterwards, so a post cut off by the deadline is still given back.
    const timeoutMs = Math.max(1, budget.ms(ports.postTimeoutMs, WEEK_CALL_BUDGET_MS));
    return service.post(addressOf(destination), payload, { timeoutMs, ...(botToken ? { botToken } : {}) });
  }

  /**
   * What a scheduled summary covers: the anomalies first seen up to shortly before its run (the
   * index's settling time), from where the previous week's summary ended (recorded when it was
   * posted), else from the previous slot.
   * Each week then starts where the last one ended: no anomaly is named twice or never, however
   * late a summary is posted, and across a change of the clocks (slots 7 days ± an hour apart).
   */
  async function scheduledWindow(name: string, due: DueSummary, nowSeconds: number, budget: InvocationBudget): Promise<SummaryWindow> {
    const ended = await budget.step(
      'summary_week',
      WEEK_CALL_BUDGET_MS,
      (signal) => ports.weeks.coveredTo(name, due.previousWeek, signal),
      WEEK_CALL_BUDGET_MS,
    );
    return { from: ended ?? due.previousSlot / 1000, to: nowSeconds - INDEX_SETTLE_SECONDS };
  }

  /**
   * One destination's summary: the anomalies of its week (a scheduled one's, or the days before
   * now when asked for) read, laid out by its kind and posted with its service.
   */
  async function summarise(
    config: RelayConfig,
    name: string,
    destination: Summarised,
    due: DueSummary | undefined,
    budget: InvocationBudget,
    keyOf: (signal: AbortSignal) => Promise<string | undefined>,
  ): Promise<{ outcome: PostOutcome; week: SummaryWeek }> {
    const kind = kindOf(destination);
    const nowMs = ports.now();
    const nowSeconds = Math.floor(nowMs / 1000);
    const covered = due ? await scheduledWindow(name, due, nowSeconds, budget) : daysBefore(nowSeconds);
    const records = await budget.step(
      'summary_records',
      RECORDS_BUDGET_MS,
      (signal) => ports.records.since(name, covered.from, signal),
      WEEK_CALL_BUDGET_MS,
    );
    const wantsLinks = kind.links(destination) && records.some((r) => r.origin !== undefined && stateOf(r.triage, nowSeconds) === 'open');
    const key = wantsLinks
      ? await budget.step('triage_key', LINK_KEY_BUDGET_MS, keyOf, WEEK_CALL_BUDGET_MS).catch(() => undefined)
      : undefined;
    const week = summaryWeek(name, destination.summary.timeZone, records, covered, nowSeconds, linker(key, name, nowMs));
    // The configuration refuses `summary` on such a kind; this only tells the compiler so.
    if (!kind.summaries) throw new SummaryNotTakenError(`A ${kind.label} destination takes no summary.`, 'no_summaries');
    const payload = (await kind.extras()).summary(destination, week);
    const botToken = kind.app?.(destination, config.slack)?.botToken;
    return { outcome: await post(serviceFor(ports.services, destination), destination, payload, botToken, budget), week };
  }

  return async (request: SummaryRequest, budget: InvocationBudget): Promise<SummaryAnswer> => {
    let config: RelayConfig;
    try {
      config = (await budget.stepIfPending('configuration', CONFIG_READ_BUDGET_MS, ports.config())).config;
    } catch (error) {
      log.error('no summaries: the relay configuration cannot be read', { reason: errorReason(error) });
      // Counted as a failure, so the summary alarm sees a run that could post nothing.
      metrics.add(summaryMetric('failed', 'unknown'));
      return { summaries: [], error: 'The relay configuration cannot be read; nothing was posted.' };
    }
    const names = request.kind === 'now' ? request.destinations : Object.keys(config.destinations);
    if (request.kind === 'now') {
      const problem = namingProblems(config, names);
      if (problem) {
        log.warn('summaries asked for destinations that have none; nothing posted', { reason: 'not_summarised' });
        return { summaries: [], error: problem };
      }
    }
    // The link key is read once per run, and only when a summary carries a link.
    let key: Promise<string | undefined> | undefined;
    const keyOf = (signal: AbortSignal) => {
      key ??= ports.linkKey(signal).catch((error: unknown) => {
        log.warn('summaries go without Triage links: the triage key cannot be read', { reason: errorReason(error) });
        return undefined;
      });
      return key;
    };

    const summaries: DestinationSummary[] = [];
    for (const name of names) {
      const destination = config.destinations[name];
      if (!destination || !hasSummary(destination)) continue;
      const type = destinationType(destination);
      const due = request.kind === 'scheduled' ? dueWeek(ports.now(), destination.summary) : undefined;
      if (due && !due.due) {
        summaries.push({ destination: name, outcome: 'not_due' });
        continue;
      }
      const failed = (reason: string) => {
        log.error('weekly summary not posted', { destination: name, destinationType: type, reason });
        metrics.add(summaryMetric('failed', type));
        summaries.push({ destination: name, outcome: 'failed', reason });
      };
      if (!budget.fits(ports.postTimeoutMs + 3 * WEEK_CALL_BUDGET_MS)) {
        // Nothing taken: the next run within the catch-up time tries again.
        failed('out_of_time');
        continue;
      }
      // A run asked for a destination posts the days before now, and leaves the week's scheduled
      // summary to come (it neither reads nor records where a week ended).
      const week = due?.due ? due.week : undefined;
      const token = randomUUID();
      if (due?.due) {
        // Held until no run would post this week's summary any more, not just for this run: once
        // the post may have gone out, only this run knows, and it gives the week back itself when
        // the post failed. Marking it posted can fail, or the run can die, after a post that went out.
        const holdSeconds = Math.max(Math.ceil((due.closes - ports.now()) / 1000), Math.ceil(budget.remainingMs() / 1000) + 5);
        let taken: boolean;
        try {
          taken = await budget.step('summary_week', WEEK_CALL_BUDGET_MS, (signal) =>
            ports.weeks.take(name, due.week, { token, holdSeconds }, signal),
          );
        } catch (error) {
          failed(errorReason(error));
          continue;
        }
        if (!taken) {
          summaries.push({ destination: name, outcome: 'already_posted' });
          continue;
        }
      }
      let result: Awaited<ReturnType<typeof summarise>> | undefined;
      let reason: string | undefined;
      try {
        result = await summarise(config, name, destination, due?.due ? due : undefined, budget, keyOf);
        if (result.outcome.kind !== 'delivered') reason = result.outcome.reason;
      } catch (error) {
        reason = errorReason(error);
      }
      if (result && reason !== undefined && UNCONFIRMED_REASONS.has(reason)) {
        // It may be in the chat already: the week stays taken, and ends where this one did, as if posted.
        if (week !== undefined) {
          const coveredTo = result.week.to;
          await budget
            .step('summary_week', WEEK_CALL_BUDGET_MS, (signal) => ports.weeks.posted(name, week, coveredTo, signal))
            .catch((error: unknown) =>
              log.warn('could not mark the week posted; it stays taken until its catch-up time ends', {
                destination: name,
                reason: errorReason(error),
              }),
            );
        }
        log.warn('weekly summary may not have reached the destination: its answer came too late; it is not posted again', {
          destination: name,
          destinationType: type,
          reason,
        });
        metrics.add(summaryMetric('unconfirmed', type));
        summaries.push({ destination: name, outcome: 'unconfirmed', reason });
        continue;
      }
      if (reason !== undefined || !result) {
        // Given back, so that the next hourly run tries again (also when where last week's ended could not be read).
        if (week !== undefined) {
          await budget
            .step('summary_week', WEEK_CALL_BUDGET_MS, (signal) => ports.weeks.release(name, week, token, signal))
            .catch((error: unknown) =>
              log.warn('could not give the week back; no later run posts its summary', { destination: name, reason: errorReason(error) }),
            );
        }
        failed(reason ?? 'unknown');
        continue;
      }
      if (week !== undefined) {
        // Where this week's summary ended: next week's starts there.
        const coveredTo = result.week.to;
        await budget
          .step('summary_week', WEEK_CALL_BUDGET_MS, (signal) => ports.weeks.posted(name, week, coveredTo, signal))
          .catch((error: unknown) =>
            log.warn('could not mark the week posted; it stays taken until its catch-up time ends, and the next week starts at its hour', {
              destination: name,
              reason: errorReason(error),
            }),
          );
      }
      const anomalies = result.week.anomalies.length;
      const outcome = anomalies === 0 ? 'quiet' : 'posted';
      metrics.add(summaryMetric(outcome, type));
      log.info('weekly summary posted', { destination: name, destinationType: type, outcome, anomalies });
      summaries.push({ destination: name, outcome, anomalies });
    }
    return { summaries };
  };
}
export type SummaryRun = ReturnType<typeof createSummaryRun>;
