import { createHmac, timingSafeEqual } from 'node:crypto';
import { type AwsJsonCall, AwsServiceError } from '../../lib/aws/json-client.js';
import type { NodeFetch, NodeFetchInit } from '../../lib/transport/fetch-over-node-http.js';
import { TimeoutError } from '../../lib/transport/node-request.js';
import { memoryEventBridge } from '../aws/events.js';
import { type Fault, type FaultPlan, takesPost } from './faults.js';

/**
 * The services the relay posts to, in memory, as one fetch: Slack (incoming webhooks and the Web
 * API), Teams Workflows, Google Chat, PagerDuty's Events API (incidents by dedup_key, with its merge
 * rules), Jira Cloud, a receiver of signed webhooks (it verifies each request and drops a retry by
 * its webhook-id, as docs/webhook.md's receiver does), and Amazon EventBridge's buses (reached
 * through the functions' AWS port, not over HTTP). Each answers in its own words, shows what it
 * took, and suffers the faults the plan draws. Time is the simulation's (setTimeout is faked).
 */

export type ServiceName = 'slack' | 'slack-app' | 'teams' | 'googlechat' | 'pagerduty' | 'jira' | 'webhook' | 'eventbridge';

/** One post a service took and shows (an edit of a shown message is one too, marked `edit`). */
export interface Shown {
  at: number;
  service: ServiceName;
  /** Where it was shown: the webhook URL's path, the Slack channel, the routing key, the Jira project. */
  place: string;
  /** The alert markers its text carries (the workload writes one into each alert's message). */
  markers: string[];
  /** The anomaly titles it names. */
  text: string;
  /** A new message (`post`), an edit of one (`edit`), a thread reply (`reply`), an issue comment (`comment`). */
  how: 'post' | 'edit' | 'reply' | 'comment';
  /** A webhook's `webhook-id`: the receiver shows each id once. */
  id?: string;
  /** The post was taken, but its answer came too late or was lost: the sender could not know. */
  ambiguous: boolean;
  body: unknown;
}

/** One PagerDuty incident as on-call sees it. */
export interface Incident {
  dedupKey: string;
  routingKey: string;
  status: 'triggered' | 'acknowledged' | 'resolved';
  /** Pages sent: one per incident opened (a trigger after a resolve opens a new one). */
  pages: number;
  summary: string;
  history: Array<{ at: number; action: string }>;
}

export interface SimServices {
  fetch: NodeFetch;
  shown: Shown[];
  incidents: Map<string, Incident>;
  /** Every page PagerDuty sent: when, and for which dedup key. */
  pages: Array<{ at: number; dedupKey: string; routingKey: string }>;
  /** Requests answered with no fault, by service, for the counts. */
  requests: Map<ServiceName, number>;
  /** Faults served, by kind. */
  faults: Map<Fault, number>;
  /** Every fault served, where and when. */
  faultLog: Array<{ at: number; key: string; fault: Fault }>;
  /** EventBridge's PutEvents, as the functions' AWS port gives it: each event taken is shown at its bus. */
  events: AwsJsonCall;
  /**
   * Every request the webhook receiver took, duplicates of an id included: what the message was
   * (its type, and the alert markers it carries) under each id.
   */
  webhookRequests: Array<{ at: number; id: string; type: string; markers: string[]; duplicate: boolean }>;
}

export interface SimServicesOptions {
  now: () => number;
  faults: FaultPlan;
  /** Milliseconds a healthy answer takes; drawn per request. */
  latencyMs: () => number;
  /** Seconds a 429 asks to wait. */
  retryAfterSeconds: () => number;
  /** The Slack app's bot token: any other is refused as Slack does. */
  slackBotToken: string;
  /** The webhook receiver's signing secret (`whsec_…`): a request not signed with it is refused with 401. */
  webhookSecret: string;
}

/** The markers the workload writes: `simA<alert number>`. */
export const MARKER = /\bsimA\d+\b/g;

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => ({ status, body, headers });

function answerOf(answer: Answer, url: string): Awaited<ReturnType<NodeFetch>> {
  const text = answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  const headers = { 'content-type': 'application/json', ...answer.headers };
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    ok: answer.status >= 200 && answer.status < 300,
    status: answer.status,
    statusText: String(answer.status),
    url,
    headers: { get: (name: string) => lower[name.toLowerCase()] ?? null, entries: () => Object.entries(lower) },
    text: async () => text,
    json: async () => JSON.parse(text) as unknown,
    arrayBuffer: async () => new TextEncoder().encode(text).buffer,
  } as unknown as Awaited<ReturnType<NodeFetch>>;
}

/** Waits `ms` of simulated time, unless the caller's deadline or signal ends the wait first. */
function waitOrGiveUp(ms: number, init: NodeFetchInit | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timers: NodeJS.Timeout[] = [];
    const done = (error?: unknown) => {
      for (const timer of timers) clearTimeout(timer);
      if (error === undefined) resolve();
      else reject(error);
    };
    if (Number.isFinite(ms)) timers.push(setTimeout(() => done(), ms));
    if (init?.timeoutMs !== undefined)
      timers.push(setTimeout(() => done(new TimeoutError(`No answer within ${init.timeoutMs} ms`)), init.timeoutMs));
    const signal = init?.signal as AbortSignal | undefined;
    if (signal?.aborted) done(signal.reason);
    signal?.addEventListener('abort', () => done(signal.reason), { once: true });
  });
}

const lostAnswer = () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });

export function simServices(options: SimServicesOptions): SimServices {
  const { now } = options;
  const shown: Shown[] = [];
  const incidents = new Map<string, Incident>();
  const pages: SimServices['pages'] = [];
  const requests = new Map<ServiceName, number>();
  const faults = new Map<Fault, number>();
  const faultLog: SimServices['faultLog'] = [];
  const slackMessages = new Map<string, { channel: string; replies: number }>();
  const jiraIssues = new Map<string, { project: string; comments: number }>();
  const webhookIds = new Set<string>();
  const webhookRequests: SimServices['webhookRequests'] = [];
  const webhookKey = Buffer.from(options.webhookSecret.replace(/^whsec_/, ''), 'base64');
  let counter = 0;

  const markersOf = (text: string) => [...new Set(text.match(MARKER) ?? [])];
  const show = (entry: Omit<Shown, 'at' | 'markers' | 'text' | 'ambiguous'>, ambiguous: boolean) => {
    const text = JSON.stringify(entry.body);
    shown.push({ ...entry, at: now(), markers: markersOf(text), text, ambiguous });
  };

  /** A Standard Webhooks request as a receiver checks it: signed with its secret, over the body as sent, within 5 minutes. */
  const webhookIdOf = (init: NodeFetchInit | undefined): string | undefined => {
    const headers = Object.fromEntries(
      Object.entries((init?.headers ?? {}) as Record<string, string>).map(([k, v]) => [k.toLowerCase(), v]),
    );
    const id = headers['webhook-id'];
    const timestamp = headers['webhook-timestamp'];
    const body = typeof init?.body === 'string' ? init.body : '';
    if (!id || !timestamp || Math.abs(now() / 1000 - Number(timestamp)) > 300) return undefined;
    const expected = Buffer.from(createHmac('sha256', webhookKey).update(`${id}.${timestamp}.${body}`).digest('base64'));
    const signed = (headers['webhook-signature'] ?? '')
      .split(' ')
      .map((s) => Buffer.from(s.replace(/^v1,/, '')))
      .some((s) => s.length === expected.length && timingSafeEqual(s, expected));
    return signed ? id : undefined;
  };

  /** What one service does with a request it takes: the answer, and what it shows. */
  type Handler = (url: URL, body: unknown, init: NodeFetchInit | undefined) => { answer: Answer; effect?: (ambiguous: boolean) => void };

  const handlers: Record<ServiceName, Handler> = {
    slack: (url, body) => ({
      answer: json(200, 'ok', { 'content-type': 'text/html' }),
      effect: (ambiguous) => show({ service: 'slack', place: url.pathname, how: 'post', body }, ambiguous),
    }),
    'slack-app': (url, body, init) => {
      const method = url.pathname.replace(/^.*\/api\//, '');
      const headers = (init?.headers ?? {}) as Record<string, string>;
      const authorization = headers['authorization'] ?? headers['Authorization'];
      if (authorization !== `Bearer ${options.slackBotToken}`) return { answer: json(200, { ok: false, error: 'invalid_auth' }) };
      const fields = (body ?? {}) as Record<string, unknown>;
      const channel = String(fields['channel'] ?? '');
      if (method === 'chat.postMessage') {
        const thread = fields['thread_ts'];
        if (typeof thread === 'string' && !slackMessages.has(`${channel}/${thread}`)) {
          return { answer: json(200, { ok: false, error: 'thread_not_found' }) };
        }
        const ts = `${1_700_000_000 + ++counter}.000100`;
        return {
          answer: json(200, { ok: true, channel, ts }),
          effect: (ambiguous) => {
            if (typeof thread === 'string') {
              const parent = slackMessages.get(`${channel}/${thread}`);
              if (parent) parent.replies += 1;
            } else slackMessages.set(`${channel}/${ts}`, { channel, replies: 0 });
            show({ service: 'slack-app', place: channel, how: typeof thread === 'string' ? 'reply' : 'post', body }, ambiguous);
          },
        };
      }
      if (method === 'chat.update') {
        const ts = String(fields['ts'] ?? '');
        if (!slackMessages.has(`${channel}/${ts}`)) return { answer: json(200, { ok: false, error: 'message_not_found' }) };
        return {
          answer: json(200, { ok: true, channel, ts }),
          effect: (ambiguous) => show({ service: 'slack-app', place: channel, how: 'edit', body }, ambiguous),
        };
      }
      return { answer: json(200, { ok: false, error: 'unknown_method' }) };
    },
    teams: (url, body) => ({
      answer: json(202, undefined),
      effect: (ambiguous) => show({ service: 'teams', place: url.pathname, how: 'post', body }, ambiguous),
    }),
    googlechat: (url, body) => {
      const space = /spaces\/([^/]+)/.exec(url.pathname)?.[1] ?? 'AAAA';
      const key = (body as { thread?: { threadKey?: string } } | undefined)?.thread?.threadKey;
      const name = `spaces/${space}/messages/m${++counter}`;
      return {
        answer: json(200, { name, thread: { name: `spaces/${space}/threads/${key ?? name}` } }),
        effect: (ambiguous) =>
          show(
            { service: 'googlechat', place: `${url.pathname}#${key ?? ''}`.replace(/#$/, ''), how: key ? 'reply' : 'post', body },
            ambiguous,
          ),
      };
    },
    pagerduty: (_url, body) => {
      const event = (body ?? {}) as Record<string, unknown>;
      const routingKey = String(event['routing_key'] ?? '');
      const dedupKey = String(event['dedup_key'] ?? '');
      const action = String(event['event_action'] ?? '');
      const summary = String((event['payload'] as { summary?: unknown } | undefined)?.summary ?? '');
      if (
        routingKey.length !== 32 ||
        !['trigger', 'acknowledge', 'resolve'].includes(action) ||
        (action === 'trigger' && summary.trim() === '')
      ) {
        return { answer: json(400, { status: 'invalid event', message: 'Event object is invalid', errors: ['invalid'] }) };
      }
      return {
        answer: json(202, { status: 'success', message: 'Event processed', dedup_key: dedupKey }),
        effect: (ambiguous) => {
          const incident = incidents.get(dedupKey);
          const history = { at: now(), action };
          if (action === 'trigger') {
            // PagerDuty merges a trigger into an open incident (triggered or acknowledged) and opens a new one after a resolve.
            if (!incident || incident.status === 'resolved') {
              incidents.set(dedupKey, {
                dedupKey,
                routingKey,
                status: 'triggered',
                pages: (incident?.pages ?? 0) + 1,
                summary,
                history: [...(incident?.history ?? []), history],
              });
              pages.push({ at: now(), dedupKey, routingKey });
              show({ service: 'pagerduty', place: routingKey, how: 'post', body }, ambiguous);
            } else {
              incident.history.push(history);
              show({ service: 'pagerduty', place: routingKey, how: 'edit', body }, ambiguous);
            }
          } else if (incident) {
            incident.history.push(history);
            if (action === 'acknowledge' && incident.status === 'triggered') incident.status = 'acknowledged';
            if (action === 'resolve') incident.status = 'resolved';
          }
        },
      };
    },
    jira: (url, body) => {
      const comment = /\/rest\/api\/3\/issue\/([^/]+)\/comment$/.exec(url.pathname);
      if (comment) {
        const issue = jiraIssues.get(decodeURIComponent(comment[1] as string));
        if (!issue)
          return { answer: json(404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} }) };
        return {
          answer: json(201, { id: String(++counter) }),
          effect: (ambiguous) => {
            issue.comments += 1;
            show({ service: 'jira', place: issue.project, how: 'comment', body }, ambiguous);
          },
        };
      }
      if (url.pathname !== '/rest/api/3/issue') return { answer: json(404, { errorMessages: ['Not found'] }) };
      const fields = ((body ?? {}) as { fields?: Record<string, unknown> }).fields ?? {};
      const project = String((fields['project'] as { key?: unknown } | undefined)?.key ?? '');
      const summary = String(fields['summary'] ?? '');
      if (summary.trim() === '' || summary.length > 255 || summary.includes('\n')) {
        return { answer: json(400, { errorMessages: [], errors: { summary: 'invalid' } }) };
      }
      const key = `${project}-${++counter}`;
      return {
        answer: json(201, { id: String(10_000 + counter), key }),
        effect: (ambiguous) => {
          jiraIssues.set(key, { project, comments: 0 });
          show({ service: 'jira', place: project, how: 'post', body }, ambiguous);
        },
      };
    },
    webhook: (url, body, init) => {
      const id = webhookIdOf(init);
      if (id === undefined) return { answer: json(401, undefined) };
      return {
        answer: json(204, undefined),
        effect: (ambiguous) => {
          // A retry of a message it has carries the message's id: the receiver keeps the first.
          const duplicate = webhookIds.has(id);
          const type = String((body as { type?: unknown } | undefined)?.type ?? '');
          webhookRequests.push({ at: now(), id, type, markers: markersOf(JSON.stringify(body)), duplicate });
          if (duplicate) return;
          webhookIds.add(id);
          show({ service: 'webhook', place: url.pathname, how: 'post', body, id }, ambiguous);
        },
      };
    },
    // Reached through the AWS port (`events` below), never over HTTP.
    eventbridge: () => ({ answer: json(404, undefined) }),
  };

  const serviceOf = (url: URL): ServiceName | undefined => {
    const host = url.hostname;
    if (host === 'hooks.slack.com') return 'slack';
    if (host === 'slack.com') return 'slack-app';
    if (host.endsWith('.logic.azure.com')) return 'teams';
    if (host === 'chat.googleapis.com') return 'googlechat';
    if (host === 'events.pagerduty.com') return 'pagerduty';
    if (host.endsWith('.atlassian.net')) return 'jira';
    if (host.endsWith('.receiver.example')) return 'webhook';
    return undefined;
  };

  /** Where a fault spell applies: one webhook, one channel, one integration, one project. */
  const faultPlace = (service: ServiceName, url: URL, body: unknown): string => {
    const fields = (body ?? {}) as Record<string, unknown>;
    if (service === 'slack-app') return `slack-app:${String(fields['channel'] ?? '')}`;
    if (service === 'pagerduty') return `pagerduty:${String(fields['routing_key'] ?? '')}`;
    if (service === 'jira') return `jira:${url.host}`;
    return `${service}:${url.host}${url.pathname}`;
  };

  const fetch: NodeFetch = async (input, init) => {
    const url = new URL(String(input));
    const service = serviceOf(url);
    if (!service) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${url.hostname}`), { code: 'ENOTFOUND' });
    const raw = typeof init?.body === 'string' ? init.body : '';
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {
      // A body that is no JSON is shown as the text it is.
    }
    const place = faultPlace(service, url, body);
    const fault = options.faults.next(place);
    faults.set(fault, (faults.get(fault) ?? 0) + 1);
    if (fault !== 'none') faultLog.push({ at: now(), key: place, fault });
    if (fault === 'hang') {
      await waitOrGiveUp(Number.POSITIVE_INFINITY, init);
      throw new Error('unreachable');
    }
    await waitOrGiveUp(options.latencyMs(), init);
    if (fault === 'throttle') {
      const seconds = options.retryAfterSeconds();
      return answerOf(
        service === 'slack-app'
          ? json(429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(seconds) })
          : json(429, { error: { code: 429, message: 'Too many requests' } }, { 'retry-after': String(seconds) }),
        url.href,
      );
    }
    if (fault === 'unavailable') return answerOf(json(503, { error: { code: 503, message: 'Service unavailable' } }), url.href);
    const handled = handlers[service](url, body, init);
    requests.set(service, (requests.get(service) ?? 0) + 1);
    const ok = handled.answer.status >= 200 && handled.answer.status < 300;
    if (takesPost(fault) && ok) handled.effect?.(fault !== 'none');
    if (fault === 'late') {
      await waitOrGiveUp(Number.POSITIVE_INFINITY, init);
      throw new Error('unreachable');
    }
    if (fault === 'lost') throw lostAnswer();
    return answerOf(handled.answer, url.href);
  };

  /** The same faults as a service over HTTP, in AWS's words: throttling and 5xx as AWS answers them, hangs, late and lost answers. */
  const bus = memoryEventBridge({ now });
  const events: AwsJsonCall = async (operation, input, signal) => {
    const entries = (input['Entries'] ?? []) as Array<Record<string, unknown>>;
    const place = `eventbridge:${String(entries[0]?.['EventBusName'] ?? 'default')}`;
    const fault = options.faults.next(place);
    faults.set(fault, (faults.get(fault) ?? 0) + 1);
    if (fault !== 'none') faultLog.push({ at: now(), key: place, fault });
    const init = signal ? { signal } : undefined;
    if (fault === 'hang') {
      await waitOrGiveUp(Number.POSITIVE_INFINITY, init);
      throw new Error('unreachable');
    }
    await waitOrGiveUp(options.latencyMs(), init);
    if (fault === 'throttle') throw new AwsServiceError('ThrottlingException', 400, {}, false, String(options.retryAfterSeconds()));
    if (fault === 'unavailable') throw new AwsServiceError('ServiceUnavailableException', 503, {});
    const before = bus.events.length;
    const answer = await bus.call(operation, input, signal);
    requests.set('eventbridge', (requests.get('eventbridge') ?? 0) + 1);
    for (const event of bus.events.slice(before))
      show(
        { service: 'eventbridge', place: event.bus, how: 'post', body: { detailType: event.detailType, detail: event.detail } },
        fault !== 'none',
      );
    if (fault === 'late') {
      await waitOrGiveUp(Number.POSITIVE_INFINITY, init);
      throw new Error('unreachable');
    }
    if (fault === 'lost') throw lostAnswer();
    return answer;
  };

  return { fetch, shown, incidents, pages, requests, faults, faultLog, events, webhookRequests };
}
