import type { StoredMessage } from './aws/sqs.js';
import type { FunctionName, Output } from './functions.js';
import type { Alert, RelayConfig, Workload } from './workload.js';
import type { Incident, Shown } from './world/services.js';

/**
 * The promises the relay makes to its users, checked against what happened in one run. Each is
 * checked from the outside: what the platform was answered, what each service shows, what sits
 * on the queues, what the functions wrote; never from the relay's own records.
 */

export type InvariantName =
  | '1 none lost'
  | '2 no duplicates'
  | '3 one open incident'
  | '4 escalation'
  | '5 snooze'
  | '6 weekly summary'
  | '7 owners'
  | '8 no waiting'
  | '9 answers and secrets'
  | '10 deadlines';

export interface Violation {
  invariant: InvariantName;
  /** Simulated time of the event that broke it. */
  at: number;
  /** What broke, in a line. */
  what: string;
  /** The anomaly it concerns, when one does: its last events are printed with the violation. */
  anomaly?: number;
}

export interface History {
  seed: number;
  workload: Workload;
  answers: Array<{ alert: Alert; at: number; status: number; body: Record<string, unknown>; raw: string; attempt: number }>;
  shown: Shown[];
  incidents: Map<string, Incident>;
  pages: Array<{ at: number; dedupKey: string; routingKey: string }>;
  clicks: Array<{ at: number; destination: string; anomaly: number; action: string; via: string; status: number; answeredAt: number }>;
  directoryRuns: Array<{
    at: number;
    end: number;
    summary: Record<string, unknown>;
    emptyList: boolean;
    faults: number;
    coverage: Map<string, Array<{ id: string; name: string; accountKey: number }>>;
  }>;
  summaryRuns: Array<{ at: number; answer?: unknown; error?: string }>;
  output: Output[];
  timeouts: Array<{ at: number; fn: FunctionName; error?: string }>;
  deadLetters: () => readonly StoredMessage[];
  retryQueue: () => readonly StoredMessage[];
  /** Every message sent to a queue, in order. */
  sentMessages?: ReadonlyArray<{ at: number; url: string; body: string; attributes: Record<string, string> }>;
  /** Faults served, by where and when. */
  faultLog?: ReadonlyArray<{ at: number; key: string; fault: string }>;
  /** Every request the webhook receiver took, duplicates of a webhook-id included. */
  webhookRequests?: ReadonlyArray<{ at: number; id: string; type: string; markers: string[]; duplicate: boolean }>;
  drainFrom: number;
  end: number;
  configChanges: Array<{ at: number; config: RelayConfig }>;
  secrets: string[];
}

const ALLOWED_STATUSES = new Set([200, 202, 400, 401, 405, 413, 415, 422, 502, 503]);
/** How long an answer may still reflect the configuration or owner directory before a change: the relay's cache. */
const CACHE_MS = 300_000;

/**
 * The anomalies a post names by their titles: a chat's text, and the JSON of a kind read by
 * programs (an event's `payload.title`, a summary's records) alike.
 */
export const anomalyOfTitle = (text: string): number[] =>
  [...text.matchAll(/(?:Cost anomaly|Recommendations) (\d+):/g)].map((m) => Number(m[1]));

/**
 * An escalation, as each kind says it: a chat's line ("Not acknowledged at storm within 2 h",
 * which an EventBridge event's `escalation.line` carries too), a webhook's `cost_alert.escalated`
 * event with `escalatedFrom`.
 */
export const isEscalationText = (text: string): boolean => /Not acknowledged at |"type":"cost_alert\.escalated"/.test(text);
/** An escalation from `name` (see isEscalationText). */
export const escalatedFrom = (text: string, name: string): boolean =>
  text.includes(`Not acknowledged at ${name}`) || text.includes(`"escalatedFrom":${JSON.stringify(name)}`);
/** A weekly summary: a chat's, a bus's `Cost Alert Summary` event, a webhook's `cost_alert.summary`. */
export const isSummaryText = (text: string): boolean =>
  /Weekly summary|"detailType":"Cost Alert Summary"|"type":"cost_alert\.summary"/.test(text);
/** A summary that names fewer anomalies than it counts: a chat's "… and 12 more not shown", an event's `notShown`. */
const isCutSummary = (text: string): boolean => /more not shown|"notShown":/.test(text);

export function checkInvariants(history: History): Violation[] {
  const violations: Violation[] = [];
  const { workload } = history;
  const destinations = new Map(workload.destinations.map((d) => [d.name, d]));
  const placeOf = (name: string) => destinations.get(name)?.place;
  const samePlace = (shownPlace: string, name: string) => {
    const place = placeOf(name);
    return place !== undefined && (shownPlace === place || shownPlace.startsWith(`${place}#`));
  };
  const isEscalation = (post: Shown) => isEscalationText(post.text);
  const isSummary = (post: Shown) => isSummaryText(post.text);
  const configAt = (at: number): RelayConfig[] => {
    // The configuration in force, and the one before it while caches may still hold that.
    let current = workload.config;
    const candidates: RelayConfig[] = [];
    for (const change of history.configChanges) {
      if (change.at <= at - CACHE_MS) current = change.config;
      else if (change.at <= at) candidates.push(change.config);
    }
    return [current, ...candidates];
  };

  // Triage actions that changed the anomaly's state at a destination, in order: a reopen of an open
  // anomaly, or an action that repeats the state, changes nothing and decides nothing.
  const actions = new Map<string, Array<{ at: number; action: string }>>();
  const STATE_OF: Record<string, string> = { acknowledge: 'acknowledged', expected: 'expected', snooze: 'snoozed', reopen: 'open' };
  for (const click of [...history.clicks].sort((a, b) => a.answeredAt - b.answeredAt)) {
    if (click.status < 200 || click.status >= 400 || click.via === 'replay') continue;
    const key = `${click.destination}|${click.anomaly}`;
    const list = actions.get(key) ?? [];
    const last = list[list.length - 1];
    // A snooze ends after 24 hours: the anomaly is open again.
    const state = last && !(last.action === 'snooze' && click.answeredAt > last.at + 24 * 3_600_000) ? STATE_OF[last.action] : 'open';
    if (STATE_OF[click.action] === state) continue;
    list.push({ at: click.answeredAt, action: click.action });
    actions.set(key, list);
  }
  const stateAt = (destination: string, anomaly: number, at: number): { action: string; at: number } | undefined => {
    const list = (actions.get(`${destination}|${anomaly}`) ?? []).filter((a) => a.at <= at);
    return list[list.length - 1];
  };

  const firstAnswer = new Map<number, History['answers'][number]>();
  for (const answer of history.answers) {
    if (answer.status >= 200 && answer.status < 300 && !firstAnswer.has(answer.alert.no)) firstAnswer.set(answer.alert.no, answer);
  }
  const routedNames = (body: Record<string, unknown>): Set<string> => {
    const names = new Set<string>();
    for (const field of ['delivered', 'queued', 'grouped', 'snoozed', 'duplicate']) {
      for (const name of (body[field] as unknown[] | undefined) ?? []) if (typeof name === 'string') names.add(name);
    }
    return names;
  };
  const markerOf = (alert: Alert) => `simA${alert.resendOf ?? alert.no}`;
  const shownAt = (name: string, marker: string) => history.shown.filter((s) => s.markers.includes(marker) && samePlace(s.place, name));
  const parkedAt = (name: string, marker: string) =>
    history.deadLetters().some((m) => m.attributes['destination'] === name && new RegExp(`\\b${marker}\\b`).test(m.body));

  // --- 9: every answer is one the contract allows; 202 only when something holds the alert ---------
  for (const answer of history.answers) {
    if (!ALLOWED_STATUSES.has(answer.status)) {
      violations.push({
        invariant: '9 answers and secrets',
        at: answer.at,
        what: `simA${answer.alert.no} was answered ${answer.status}`,
        anomaly: answer.alert.anomaly,
      });
    }
    if (answer.status === 202) {
      const queued = (answer.body['queued'] as string[] | undefined) ?? [];
      const grouped = (answer.body['grouped'] as string[] | undefined) ?? [];
      if (queued.length + grouped.length === 0) {
        violations.push({
          invariant: '9 answers and secrets',
          at: answer.at,
          what: `simA${answer.alert.no} was answered 202 naming nothing that holds it`,
          anomaly: answer.alert.anomaly,
        });
      }
      // A re-send of an alert that waits already is held by what holds the original.
      const duplicates = new Set((answer.body['duplicate'] as string[] | undefined) ?? []);
      for (const name of queued.filter((n) => !duplicates.has(n))) {
        const marker = new RegExp(`\\b${markerOf(answer.alert)}\\b`);
        const held = (history.sentMessages ?? []).some(
          (m) => m.at <= answer.at && m.attributes['destination'] === name && marker.test(m.body),
        );
        if (history.sentMessages && !held) {
          violations.push({
            invariant: '9 answers and secrets',
            at: answer.at,
            what: `simA${answer.alert.no} was answered 202 queued for ${name}, but no queue holds it`,
            anomaly: answer.alert.anomaly,
          });
        }
      }
    }
  }
  const places: Array<[string, string]> = [
    ['an answer', history.answers.map((a) => a.raw).join('\n')],
    ['a log line or metric', history.output.map((o) => o.line).join('\n')],
    [
      'a queue message',
      [...history.retryQueue(), ...history.deadLetters()].map((m) => `${m.body} ${JSON.stringify(m.attributes)}`).join('\n'),
    ],
    ['a sent queue message', (history.sentMessages ?? []).map((m) => `${m.body} ${JSON.stringify(m.attributes)}`).join('\n')],
    ['a post at a destination', history.shown.map((s) => s.text).join('\n')],
  ];
  for (const secret of history.secrets) {
    for (const [where, text] of places) {
      if (secret.length >= 8 && text.includes(secret)) {
        violations.push({
          invariant: '9 answers and secrets',
          at: history.end,
          what: `a secret (${secret.slice(0, 4)}…) appears in ${where}`,
        });
      }
    }
  }

  // --- 10: every invocation ends within its function's timeout -------------------------------------
  for (const timeout of history.timeouts) {
    violations.push({
      invariant: '10 deadlines',
      at: timeout.at,
      what: `${timeout.fn} ${timeout.error ? `failed: ${timeout.error}` : 'ran past its timeout'}`,
    });
  }

  // --- 1 and 7: every alert answered 2xx reaches where it was routed, and routing follows the owners ---
  const wholeReads = history.directoryRuns.filter((r) => r.summary['outcome'] === 'succeeded' && r.faults === 0 && !r.emptyList);
  for (const [no, answer] of firstAnswer) {
    const { alert } = answer;
    const routed = routedNames(answer.body);
    const snoozed = new Set((answer.body['snoozed'] as string[] | undefined) ?? []);
    for (const name of routed) {
      if (snoozed.has(name)) continue;
      const marker = markerOf(alert);
      if (shownAt(name, marker).length > 0 || parkedAt(name, marker)) continue;
      const kind = destinations.get(name)?.kind;
      const state = stateAt(name, alert.anomaly, answer.at);
      // PagerDuty: a follow-up of an anomaly marked expected there is not sent (it would page again).
      if (kind === 'pagerduty' && state?.action === 'expected') continue;
      violations.push({
        invariant: '1 none lost',
        at: answer.at,
        what: `simA${no} was answered ${answer.status} for ${name} but never reached it nor was parked`,
        anomaly: alert.anomaly,
      });
    }
    // Owners: a cost-center route matches exactly when the last whole read of the directory said so.
    if (alert.quiet) continue;
    for (const config of [configAt(answer.at)[0] as RelayConfig]) {
      for (const route of config.routes) {
        const names = route.when['costCenter'] as string[] | undefined;
        if (!names) continue;
        const reads = wholeReads.filter((r) => r.end <= answer.at);
        const candidates = reads.filter((r) => r.end >= answer.at - CACHE_MS - 3_600_000);
        const considered = [
          ...(reads.length > candidates.length ? [reads[reads.length - candidates.length - 1]] : []),
          ...candidates,
        ].filter((r): r is NonNullable<typeof r> => r !== undefined);
        const matches = (read: (typeof considered)[number] | undefined) =>
          (read?.coverage.get(alert.accountId) ?? []).some((cc) =>
            names.some((n) => n.toLowerCase() === cc.name.toLowerCase() || n === cc.id),
          );
        const allowed = new Set((considered.length > 0 ? considered : [undefined]).map(matches));
        for (const to of route.to) {
          // Other routes may send it there as well: only a destination no other route names is judged.
          const otherRoute = config.routes.some((r) => r !== route && r.to.includes(to));
          if (otherRoute || to === 'default') continue;
          const got = routed.has(to);
          if (!allowed.has(got)) {
            violations.push({
              invariant: '7 owners',
              at: answer.at,
              what: `simA${no} (account ${alert.accountId}) ${got ? 'went' : 'did not go'} to ${to}, though the last whole read of the directory said ${got ? 'no' : 'yes'}`,
              anomaly: alert.anomaly,
            });
          }
        }
      }
    }
  }
  // A run that read nothing whole never counts as a success: the stale-directory alarm must see it.
  for (const run of history.directoryRuns) {
    if (run.emptyList && ['succeeded', 'continued'].includes(String(run.summary['outcome']))) {
      violations.push({
        invariant: '7 owners',
        at: run.end,
        what: `a directory run that read an empty payer list counted ${String(run.summary['outcome'])}`,
      });
    }
  }

  // --- 2: no destination shows one alert twice, but after a post whose answer was lost or late -----
  const showings = new Map<string, Shown[]>();
  for (const post of history.shown) {
    if (post.how === 'edit' || isEscalation(post) || isSummary(post)) continue;
    for (const marker of post.markers) {
      const key = `${post.place.split('#')[0]}|${marker}`;
      const list = showings.get(key) ?? [];
      list.push(post);
      showings.set(key, list);
    }
  }
  // A webhook receiver drops a retry by its webhook-id (docs/webhook.md), so it shows each id once
  // whatever became of the answers: one alert under two ids is shown twice, and every retry of a
  // message must carry the id it was first sent with.
  const webhookPlaces = new Set(workload.destinations.filter((d) => d.kind === 'webhook').map((d) => d.place));
  const idsOf = new Map<string, Set<string>>();
  for (const request of history.webhookRequests ?? []) {
    if (request.type !== 'cost_alert.opened' && request.type !== 'cost_alert.updated') continue;
    for (const marker of request.markers) {
      const ids = idsOf.get(marker) ?? new Set();
      ids.add(request.id);
      idsOf.set(marker, ids);
    }
  }
  for (const [marker, ids] of idsOf) {
    if (ids.size < 2) continue;
    const no = Number(marker.slice(4));
    const alert = workload.alerts.find((a) => a.no === no);
    const first = (history.webhookRequests ?? []).filter((r) => r.markers.includes(marker))[1];
    violations.push({
      invariant: '2 no duplicates',
      at: first?.at ?? history.end,
      what: `${marker} reached the webhook receiver under ${ids.size} webhook-ids: a retry must keep its message's id`,
      ...(alert ? { anomaly: alert.anomaly } : {}),
    });
  }
  for (const [key, posts] of showings) {
    const webhook = webhookPlaces.has(key.split('|')[0] ?? '');
    // A retry after a lost answer may show twice where nothing drops it; never at a webhook receiver.
    const ambiguous = webhook ? 0 : posts.filter((p) => p.ambiguous).length;
    if (posts.length > 1 + ambiguous) {
      const [place, marker] = key.split('|');
      const no = Number(marker?.slice(4));
      const alert = workload.alerts.find((a) => a.no === no);
      violations.push({
        invariant: '2 no duplicates',
        at: (posts[1] as Shown).at,
        what: `${marker} shown ${posts.length} times at ${place}`,
        ...(alert ? { anomaly: alert.anomaly } : {}),
      });
    }
  }

  // --- 3: PagerDuty pages no one for an anomaly its team marked expected there ---------------------
  const pagerDuty = workload.destinations.filter((d) => d.kind === 'pagerduty');
  for (const page of history.pages) {
    const destination = pagerDuty.find((d) => d.place === page.routingKey);
    const incident = history.incidents.get(page.dedupKey);
    const anomaly = anomalyOfTitle(incident?.summary ?? '')[0];
    if (!destination || anomaly === undefined) continue;
    const state = stateAt(destination.name, anomaly, page.at - 60_000);
    if (state?.action === 'expected') {
      violations.push({
        invariant: '3 one open incident',
        at: page.at,
        what: `PagerDuty paged for anomaly ${anomaly} after it was marked expected at ${destination.name}`,
        anomaly,
      });
    }
  }

  // --- 4 and 8: escalation exactly when nobody triaged where it was offered, once, on time ---------
  const faultsAt = (name: string, from: number, to: number) => {
    const key = destinations.get(name)?.faultKey;
    return (history.faultLog ?? []).some((f) => f.key === key && f.at >= from && f.at <= to && f.fault !== 'none');
  };
  for (const [name, destination] of destinations) {
    const escalate = destination.config['escalate'] as { afterMinutes: number; to: string } | undefined;
    if (!escalate) continue;
    const openings = new Map<number, number>();
    for (const answer of history.answers) {
      if (answer.alert.quiet || answer.status < 200 || answer.status >= 300) continue;
      if (!routedNames(answer.body).has(name) || openings.has(answer.alert.anomaly)) continue;
      openings.set(answer.alert.anomaly, answer.alert.at);
    }
    for (const [anomaly, firstSeen] of openings) {
      const due = firstSeen + escalate.afterMinutes * 60_000;
      if (due > history.drainFrom) continue;
      const shownHere = history.shown.filter((s) => samePlace(s.place, name) && anomalyOfTitle(s.text).includes(anomaly) && !isSummary(s));
      // Only what it showed by the time the escalation fell due: an opening parked there, whose
      // anomaly a later alert opened anew, gave nobody a way to triage it in time.
      const offeredBy = (t: number) =>
        shownHere.some((s) => s.at <= t && (s.text.includes('/triage/') || s.text.includes('triage_acknowledge')));
      const offered = offeredBy(due);
      const triaged = (actions.get(`${name}|${anomaly}`) ?? []).some((a) => a.at < due);
      const escalations = history.shown.filter(
        (s) =>
          s.how !== 'edit' &&
          samePlace(s.place, escalate.to) &&
          isEscalation(s) &&
          escalatedFrom(s.text, name) &&
          anomalyOfTitle(s.text).includes(anomaly),
      );
      const expected = offered && !triaged;
      // An opening that waited (its group's closing, its retry) past the due time escalates once it is
      // shown with a way to triage, if nobody triaged it by then: late, but offered before it went.
      const first = escalations[0];
      const lateButOffered =
        first !== undefined && !offered && offeredBy(first.at) && !(actions.get(`${name}|${anomaly}`) ?? []).some((a) => a.at < first.at);
      if (escalations.length > 1 + escalations.filter((s) => s.ambiguous).length) {
        violations.push({
          invariant: '4 escalation',
          at: (escalations[1] as Shown).at,
          what: `anomaly ${anomaly} escalated ${escalations.length} times from ${name}`,
          anomaly,
        });
      }
      if (!expected && !lateButOffered && escalations.length > 0) {
        violations.push({
          invariant: '4 escalation',
          at: (escalations[0] as Shown).at,
          what: `anomaly ${anomaly} escalated from ${name} though ${offered ? 'it was triaged there in time' : `${name} offered no way to triage it`}`,
          anomaly,
        });
      }
      const parked = history
        .deadLetters()
        .some((m) => m.attributes['destination'] === escalate.to && anomalyOfTitle(m.body).includes(anomaly));
      // Where `to` has the anomaly already (a route sends it there too), the escalation may say so there or stay away.
      // So does one where another destination's escalation brought it first: `to` never shows an anomaly twice.
      const toHasIt =
        history.answers.some(
          (a) => a.alert.anomaly === anomaly && a.at < due && a.status >= 200 && a.status < 300 && routedNames(a.body).has(escalate.to),
        ) ||
        history.shown.some(
          (s) => s.at < due && samePlace(s.place, escalate.to) && !isSummary(s) && anomalyOfTitle(s.text).includes(anomaly),
        );
      if (expected && escalations.length === 0 && !parked && !toHasIt) {
        violations.push({
          invariant: '4 escalation',
          at: due,
          what: `anomaly ${anomaly} stayed untriaged at ${name} past ${escalate.afterMinutes} min and never escalated to ${escalate.to}`,
          anomaly,
        });
      }
      if (expected && first && first.at > due + 60_000 && !faultsAt(escalate.to, due - 60_000, first.at)) {
        violations.push({
          invariant: '8 no waiting',
          at: first.at,
          what: `anomaly ${anomaly}'s escalation to ${escalate.to} went out ${Math.round((first.at - due) / 1000)} s late`,
          anomaly,
        });
      }
    }
  }

  // --- 8: a grouped alert goes out within the destination's wait and 5 s ---------------------------
  for (const answer of history.answers) {
    for (const name of (answer.body['grouped'] as string[] | undefined) ?? []) {
      const wait = configAt(answer.at)
        .map((c) => (c.destinations[name]?.['group'] as { waitSeconds?: number } | undefined)?.waitSeconds ?? 0)
        .reduce((a, b) => Math.max(a, b), 0);
      const posts = shownAt(name, markerOf(answer.alert));
      const first = posts[0];
      const limit = answer.at + (wait + 5) * 1000;
      if (first && first.at > limit && !faultsAt(name, answer.at, first.at)) {
        violations.push({
          invariant: '8 no waiting',
          at: first.at,
          what: `simA${answer.alert.no} waited in ${name}'s group ${Math.round((first.at - answer.at) / 1000)} s (wait ${wait} s)`,
          anomaly: answer.alert.anomaly,
        });
      }
    }
  }

  // --- 5: nothing of a snoozed anomaly reaches that destination until the snooze ends --------------
  for (const [key, list] of actions) {
    const [name, anomalyText] = key.split('|');
    const anomaly = Number(anomalyText);
    for (const [i, act] of list.entries()) {
      if (act.action !== 'snooze') continue;
      const ends = Math.min(act.at + 24 * 3_600_000, list[i + 1]?.at ?? Number.POSITIVE_INFINITY);
      const later = workload.alerts.filter((a) => a.anomaly === anomaly && a.at > act.at + 5_000 && a.at < ends).map(markerOf);
      for (const post of history.shown) {
        if (post.how === 'edit' || post.at >= ends || !samePlace(post.place, name as string)) continue;
        if (post.markers.some((m) => later.includes(m))) {
          violations.push({
            invariant: '5 snooze',
            at: post.at,
            what: `anomaly ${anomaly} was posted to ${name} while snoozed there`,
            anomaly,
          });
        }
      }
    }
  }

  // --- 6: each anomaly first seen at a summarised destination is named in exactly one summary ------
  for (const [name, destination] of destinations) {
    if (!destination.config['summary']) continue;
    const summaries = history.shown.filter((s) => samePlace(s.place, name) && isSummary(s) && s.how !== 'edit');
    const last = summaries[summaries.length - 1];
    const named = new Map<number, number>();
    for (const post of summaries)
      for (const anomaly of new Set(anomalyOfTitle(post.text))) named.set(anomaly, (named.get(anomaly) ?? 0) + 1);
    // At most one a week: two summaries less than six days apart post one week twice.
    for (const [i, post] of summaries.entries()) {
      const previous = summaries[i - 1];
      if (previous && post.at - previous.at < 6 * 86_400_000) {
        violations.push({
          invariant: '6 weekly summary',
          at: post.at,
          what: `${name} got two weekly summaries ${Math.round((post.at - previous.at) / 60_000)} min apart`,
        });
      }
    }
    if (!last) continue;
    const firstSeen = new Map<number, number>();
    for (const [, answer] of firstAnswer) {
      if (answer.alert.quiet || answer.alert.objectType !== 'anomaly_alert' || !routedNames(answer.body).has(name)) continue;
      // Only what the destination showed: an alert parked before it ever got there was never seen there.
      if (shownAt(name, markerOf(answer.alert)).length === 0) continue;
      if (!firstSeen.has(answer.alert.anomaly)) firstSeen.set(answer.alert.anomaly, answer.at);
    }
    for (const [anomaly, seen] of firstSeen) {
      // The index lags: an anomaly first seen just before a summary may fall to the next one.
      if (seen > last.at - 3_600_000) continue;
      const count = named.get(anomaly) ?? 0;
      // A long week is cut ("… and 12 more not shown"): an anomaly it did not name may be among those it counted.
      const next = summaries.find((post) => post.at > seen);
      if (count === 0 && next && isCutSummary(next.text)) continue;
      if (count !== 1) {
        violations.push({
          invariant: '6 weekly summary',
          at: last.at,
          what: `anomaly ${anomaly}, first seen at ${name}, is named in ${count} weekly summaries`,
          anomaly,
        });
      }
    }
    for (const quiet of workload.alerts.filter((a) => a.quiet)) {
      if (summaries.some((s) => s.text.includes(quiet.title))) {
        violations.push({ invariant: '6 weekly summary', at: last.at, what: `a quiet test alert is named in ${name}'s weekly summary` });
      }
    }
  }

  return violations.sort((a, b) => a.at - b.at);
}

/** What happened to one anomaly, in order: its alerts and their answers, what each service showed of it, the clicks on it. */
export function eventsOf(history: History, anomaly: number): Array<{ at: number; text: string }> {
  const events: Array<{ at: number; text: string }> = [];
  const markers = new Set(history.workload.alerts.filter((a) => a.anomaly === anomaly).map((a) => `simA${a.no}`));
  for (const answer of history.answers) {
    if (answer.alert.anomaly !== anomaly) continue;
    events.push({
      at: answer.alert.at,
      text: `sent simA${answer.alert.no}${answer.alert.resendOf ? ` (re-send of simA${answer.alert.resendOf})` : ''}`,
    });
    events.push({ at: answer.at, text: `answered ${answer.status} ${answer.raw.slice(0, 160)}` });
  }
  const place = new Map(history.workload.destinations.map((d) => [d.place, d.name]));
  for (const post of history.shown) {
    const names = anomalyOfTitle(post.text).includes(anomaly) || post.markers.some((m) => markers.has(m));
    if (!names) continue;
    const where = place.get(post.place.split('#')[0] ?? '') ?? post.place;
    const what = isEscalationText(post.text) ? 'escalation' : isSummaryText(post.text) ? 'summary' : post.how;
    events.push({
      at: post.at,
      text: `${where} shows a ${what}${post.ambiguous ? ' (its answer was lost or late)' : ''} [${post.markers.join(' ')}]`,
    });
  }
  for (const click of history.clicks) {
    if (click.anomaly === anomaly)
      events.push({ at: click.answeredAt, text: `${click.action} at ${click.destination} by ${click.via}: ${click.status}` });
  }
  for (const message of history.deadLetters()) {
    if ((message.body.match(/\bsimA\d+\b/g) ?? []).some((m) => markers.has(m)))
      events.push({ at: message.sentAt, text: `parked for ${message.attributes['destination']}: ${message.attributes['reason']}` });
  }
  return events.sort((a, b) => a.at - b.at);
}
