import type { CostEventChange, CostEventSubject } from '../cost-events/events.js';
import { withoutControls } from '../format/fit.js';
import { inertText, singleLine } from '../format/text.js';
import { triageLine, triageName } from '../format/triage.js';
import type { Logger } from '../log/logger.js';
import { type Metrics, triageActionMetric } from '../metrics/metrics.js';
import type { Interactions } from '../notify/kind.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { type DigestToken, type TriageToken, verifyTriageToken } from '../triage-link/token.js';
import { REOPEN, type TriageAction } from '../vocabulary/triage.js';
import { PAGE_HEADERS, renderDigestPage, renderTriagePage } from './page.js';
import { triageActionSchema } from './state.js';
import type { TriageStore } from './store.js';

/** The longest note a person may give with "Expected" for its cost event. */
export const COST_EVENT_NOTE_MAX = 500;

export interface TriageRequest {
  method: string;
  /** The raw path, `/slack/interactions` or `/triage/<token>`. */
  path: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The body as it arrived (decoded from base64 when API Gateway encoded it). */
  body: string;
  /** `https://<API domain>` the request came in on, where known: a note that reopens an alert links back to its page. */
  origin?: string | undefined;
}

export interface TriageAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  /** A picture's bytes, base64 (API Gateway decodes them for the client). */
  isBase64Encoded?: boolean;
}

export interface TriagePorts {
  /** The key that signs triage links; undefined when the stack has none (no links, 404). */
  tokenKey(signal: AbortSignal): Promise<string | undefined>;
  /**
   * The clicks a path takes: the kind whose app posts there, its interactions and the app's
   * signing secret (undefined when none is configured). Undefined for any other path.
   */
  interactionsAt(path: string): ((signal: AbortSignal) => Promise<AppInteractions>) | undefined;
  store: TriageStore;
  /** Posts what a kind built for its app (the clicked message, edited) to where it says (`{ channel }`). */
  postAsApp(to: object, payload: unknown, signal: AbortSignal): Promise<void>;
  /** A short follow-up at the token's destination (Google Chat in the anomaly's thread). */
  postFollowUp(
    token: TriageToken,
    note: { action: TriageAction; line: string; by: string; at: number; link?: string },
    signal: AbortSignal,
  ): Promise<void>;
  /** The kind of a configured destination (`slack`, `teams`, …), for the metric; undefined when it is gone. */
  destinationTypeOf(name: string): Promise<string | undefined>;
  metrics: Metrics;
  logger: Logger;
  now: () => number;
  /**
   * Writes "Expected" to the platform as a cost event, or deletes it on a reopen (lib/cost-events),
   * where the configuration asks for it; within its own time, the rest left to the retry queue.
   */
  costEvents?: {
    /** Whether the configuration asks for them now (`platform.costEvents`). */
    enabled(): Promise<boolean>;
    /** One subject is written at once where it can be; several (a digest's "all") wait on the retry queue, paced there. */
    apply(change: CostEventChange, subjects: readonly CostEventSubject[], budget: InvocationBudget): Promise<void>;
  };
  /** `GET /chart/<token>`: the picture of an account's cost trend (lib/trend); undefined where the stack has no platform login (404). */
  chart?: (token: string, budget: InvocationBudget) => Promise<TriageAnswer>;
}

/** A kind's clicks, as the triage function serves them. */
export interface AppInteractions {
  type: string;
  interactions: Interactions;
  secret: string | undefined;
}

/** What the app clicks, the store, the update and the answer may use of the 3 seconds a chat waits. */
export const SLACK_STORE_BUDGET_MS = 1_000;
export const SLACK_UPDATE_BUDGET_MS = 1_200;
const SECRET_BUDGET_MS = 600;
/** How many anomalies of a digest one action on all of them writes side by side. */
const SIDE_BY_SIDE = 10;

/** A title or account from a link in a follow-up: sender text, inert and on one line; each kind escapes its syntax on top. */
const noteText = (text: string): string => singleLine(inertText(withoutControls(text)));

const text = (statusCode: number, body: string): TriageAnswer => ({
  statusCode,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  body,
});

/** The token in a `/triage/<token>` or `/chart/<token>` path; a path that does not decode is no token (403, like a forged one). */
function pathToken(path: string, prefix = '/triage/'): string {
  const raw = path.slice(prefix.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    return '';
  }
}

/** Serves the chat apps' clicks and the triage page; decisions only, clients come in as ports. */
export function createTriageHandler(ports: TriagePorts) {
  const log = ports.logger;
  const count = (action: TriageAction, destinationType: string) => ports.metrics.add(triageActionMetric(action, destinationType));

  async function interaction(
    request: TriageRequest,
    budget: InvocationBudget,
    found: (signal: AbortSignal) => Promise<AppInteractions>,
  ): Promise<TriageAnswer> {
    const app = await budget.step('signing_secret', SECRET_BUDGET_MS, found).catch((error) => {
      log.error('cannot read the app signing secret', { reason: errorReason(error) });
      return undefined;
    });
    if (!app?.secret) return text(401, 'Interactivity is not configured.');
    const { interactions, type } = app;
    const check = interactions.verify(request, app.secret, ports.now());
    if (!check.ok) {
      log.warn('refused an app interaction', { reason: check.reason });
      return text(401, 'Signature refused.');
    }
    const click = interactions.parse(request.body);
    // Apps send other interactions too (a link button's click): nothing to do, but not an error.
    if (!click) return text(200, '');
    const nowSeconds = Math.floor(ports.now() / 1000);
    const who = triageName(click.userName);
    let edited: ReturnType<Interactions['update']>;
    let costEvent: Promise<void> | undefined;
    try {
      const outcome = await budget.step('triage_store', SLACK_STORE_BUDGET_MS, async (signal) => {
        // Remembered in the table, so the same signed click replayed into any container is refused.
        if (!(await ports.store.firstUse(check.replayKey, check.usableUntil + 1, signal))) return 'replayed' as const;
        return ports.store.apply(click.anomalyId, click.action, who, nowSeconds, signal);
      });
      if (outcome === 'replayed') {
        log.warn('refused an app interaction', { reason: 'replayed' });
        return text(401, 'Signature refused.');
      }
      // A click that repeats the state changes nothing, and the message already shows it.
      if (outcome.kind === 'unchanged') {
        log.info('triage action repeats the state; nothing changed', { action: click.action, destinationType: type });
        return text(200, '');
      }
      count(click.action, type);
      log.info('triage action', { action: click.action, destinationType: type });
      edited = interactions.update(click, { state: outcome.change.state.state }, nowSeconds);
      const { about } = click;
      if (about) {
        const anomaly = { title: about.title, account: about.accountId, destination: about.destination, anomalyId: click.anomalyId };
        costEvent = costEventsFor(click.action, who, [anomaly], budget);
      }
    } catch (error) {
      // Cut off in time: the click is answered, and the message says it did not take.
      log.error('cannot record a triage action', { reason: errorReason(error) });
      edited = interactions.update(click, { failed: true }, nowSeconds);
    }
    // The platform hears of it beside the message's edit, within its own share of the time.
    await Promise.all([
      budget
        .step('slack_update', SLACK_UPDATE_BUDGET_MS, (signal) => ports.postAsApp(edited.to, edited.payload, signal))
        .catch((error: unknown) => {
          // The state is recorded; the message shows it with the anomaly's next follow-up.
          log.warn('cannot update the message after a triage action', { reason: errorReason(error) });
        }),
      costEvent,
    ]);
    return text(200, '');
  }

  async function triagePage(request: TriageRequest, budget: InvocationBudget): Promise<TriageAnswer> {
    const key = await budget
      .step('token_key', SECRET_BUDGET_MS, (signal) => ports.tokenKey(signal))
      .catch((error) => {
        log.error('cannot read the triage key', { reason: errorReason(error) });
        throw error;
      });
    if (!key) return text(404, 'Not found.');
    const supplied = pathToken(request.path);
    const reading = verifyTriageToken(key, supplied, ports.now());
    if (!reading.ok) {
      log.warn('refused a triage link', { reason: reading.reason });
      return text(403, 'This link is not valid or has expired.');
    }
    // The link as the relay signed it: the verified token, on the origin this request came in on.
    const link = request.origin ? { link: `${request.origin}/triage/${supplied}` } : {};
    if ('digest' in reading) return digestPage(request, budget, reading.digest, link);
    const token = reading.token;
    const nowSeconds = Math.floor(ports.now() / 1000);
    let notice: string | undefined;
    if (request.method === 'POST') {
      const form = new URLSearchParams(request.body);
      const action = triageActionSchema.safeParse(form.get('action'));
      if (!action.success) return text(400, 'Unknown action.');
      const who = triageName(form.get('name') ?? '');
      const note = (form.get('note') ?? '').trim().slice(0, COST_EVENT_NOTE_MAX);
      const outcome = await budget.step('triage_store', SLACK_STORE_BUDGET_MS * 2, (signal) =>
        ports.store.apply(token.a, action.data, who, nowSeconds, signal),
      );
      if (outcome.kind === 'unchanged') notice = 'Nothing changed: the anomaly is already in that state.';
      else {
        await counted(token.d, action.data, 1);
        // The platform hears of it beside the chat, never holding up the answer beyond its own time.
        const [said] = await Promise.all([
          told(budget, token, { action: action.data, line: triageLine(action.data, who, nowSeconds), by: who, at: nowSeconds, ...link }),
          costEventsFor(action.data, who, [{ title: token.t, account: token.c, destination: token.d, note, anomalyId: token.a }], budget),
        ]);
        notice = said;
      }
    }
    const record = await budget.step('triage_read', SLACK_STORE_BUDGET_MS * 2, (signal) => ports.store.read(token.a, signal));
    return {
      statusCode: 200,
      headers: { ...PAGE_HEADERS },
      body: renderTriagePage({
        title: token.t,
        account: token.c,
        destination: token.d,
        record,
        nowSeconds,
        ...(notice ? { notice } : {}),
        ...((await ports.costEvents?.enabled().catch(() => false)) ? { noteField: true } : {}),
      }),
    };
  }

  /**
   * The cost events an applied action means (Expected writes one per anomaly, Reopen deletes it),
   * where the configuration asks for them; each one's day is its anomaly's first sighting as its
   * item records it. Never throws: the action is recorded whatever becomes of its event.
   */
  async function costEventsFor(
    action: TriageAction,
    by: string,
    anomalies: ReadonlyArray<{ title: string; account: string; destination: string; note?: string; anomalyId: string }>,
    budget: InvocationBudget,
  ): Promise<void> {
    const change = action === 'expected' ? 'write' : action === REOPEN ? 'delete' : undefined;
    if (!change || anomalies.length === 0 || !ports.costEvents || !(await ports.costEvents.enabled().catch(() => false))) return;
    const records = await budget
      .step('triage_read', SLACK_STORE_BUDGET_MS, (signal) => Promise.all(anomalies.map((a) => ports.store.read(a.anomalyId, signal))))
      .catch(() => []);
    const today = Math.floor(ports.now() / 1000);
    const subjects = anomalies.map(({ anomalyId: _id, note, ...about }, i) => ({
      ...about,
      by,
      ...(note && change === 'write' ? { note } : {}),
      day: new Date((records[i]?.firstSeen ?? today) * 1000).toISOString().slice(0, 10),
    }));
    await ports.costEvents
      .apply(change, subjects, budget)
      .catch((error: unknown) => log.error('cost event neither written nor queued', { reason: errorReason(error) }));
  }

  /** Counts `changed` actions at the destination's type, and logs them. */
  async function counted(destination: string, action: TriageAction, changed: number) {
    const type = (await ports.destinationTypeOf(destination).catch(() => undefined)) ?? 'unknown';
    for (let i = 0; i < changed; i++) count(action, type);
    log.info('triage action', { action, destinationType: type, ...(changed > 1 ? { anomalies: changed } : {}) });
  }

  /** Posts the short follow-up at the destination; the notice says what was done, and whether the destination could be told. */
  async function told(budget: InvocationBudget, token: TriageToken, note: Parameters<TriagePorts['postFollowUp']>[1]): Promise<string> {
    try {
      await budget.step('follow_up', 3_000, (signal) => ports.postFollowUp(token, note, signal));
      return note.line;
    } catch (error) {
      log.warn('cannot post the triage follow-up', { reason: errorReason(error) });
      return `${note.line} (the destination could not be told)`;
    }
  }

  /**
   * A digest's page: each anomaly it names, and the action a button posts as `<action>:<place>`
   * or `<action>:all` (every one still open; someone's decision on another stays). One short
   * follow-up per action at the destination, naming the anomaly or how many.
   */
  async function digestPage(
    request: TriageRequest,
    budget: InvocationBudget,
    digest: DigestToken,
    link: { link?: string },
  ): Promise<TriageAnswer> {
    const nowSeconds = Math.floor(ports.now() / 1000);
    const { anomalies } = digest;
    let notice: string | undefined;
    if (request.method === 'POST') {
      const form = new URLSearchParams(request.body);
      const [name = '', which = ''] = (form.get('action') ?? '').split(':');
      const action = triageActionSchema.safeParse(name);
      const place = /^\d{1,4}$/.test(which) ? Number(which) : which === 'all' ? 'all' : undefined;
      if (
        !action.success ||
        place === undefined ||
        (place !== 'all' && place >= anomalies.length) ||
        (place === 'all' && action.data === REOPEN)
      ) {
        return text(400, 'Unknown action.');
      }
      const who = triageName(form.get('name') ?? '');
      const chosen = place === 'all' ? anomalies : [anomalies[place]!];
      const changed = await budget.step('triage_store', SLACK_STORE_BUDGET_MS * 2, async (signal) => {
        const applied: typeof anomalies = [];
        for (let i = 0; i < chosen.length; i += SIDE_BY_SIDE) {
          const batch = chosen.slice(i, i + SIDE_BY_SIDE);
          const outcomes = await Promise.all(
            batch.map((a) => ports.store.apply(a.anomalyId, action.data, who, nowSeconds, signal, place === 'all')),
          );
          applied.push(...batch.filter((_, j) => outcomes[j]?.kind === 'applied'));
        }
        return applied;
      });
      const [first] = changed;
      if (!first)
        notice =
          place === 'all'
            ? 'Nothing changed: no anomaly of this digest is open.'
            : 'Nothing changed: the anomaly is already in that state.';
      else {
        await counted(digest.d, action.data, changed.length);
        const what =
          place === 'all'
            ? `${changed.length} ${changed.length === 1 ? 'anomaly' : 'anomalies'} of a digest`
            : [first.title, first.account].filter(Boolean).map(noteText).join(' · ');
        const line = `${triageLine(action.data, who, nowSeconds)}: ${what}`;
        // In the digest's thread (Google Chat), or, on a Slack app, under the message that named the first anomaly.
        const token: TriageToken = {
          a: first.anomalyId,
          d: digest.d,
          t: first.title,
          c: first.account,
          ...(digest.k !== undefined ? { k: digest.k } : {}),
          e: digest.e,
        };
        const anomaliesChanged = changed.map((a) => ({
          title: a.title,
          account: a.account,
          destination: digest.d,
          anomalyId: a.anomalyId,
        }));
        const [said] = await Promise.all([
          told(budget, token, { action: action.data, line, by: who, at: nowSeconds, ...link }),
          costEventsFor(action.data, who, anomaliesChanged, budget),
        ]);
        notice = said;
      }
    }
    const records = await budget.step('triage_read', SLACK_STORE_BUDGET_MS * 2, (signal) =>
      Promise.all(anomalies.map((a) => ports.store.read(a.anomalyId, signal))),
    );
    return {
      statusCode: 200,
      headers: { ...PAGE_HEADERS },
      body: renderDigestPage({
        destination: digest.d,
        anomalies: anomalies.map((a, i) => ({ title: a.title, account: a.account, record: records[i] })),
        nowSeconds,
        ...(notice ? { notice } : {}),
      }),
    };
  }

  return async (request: TriageRequest, budget: InvocationBudget): Promise<TriageAnswer> => {
    try {
      const app = request.method === 'POST' ? ports.interactionsAt(request.path) : undefined;
      if (app) return await interaction(request, budget, app);
      if (request.path.startsWith('/triage/') && (request.method === 'GET' || request.method === 'POST')) {
        return await triagePage(request, budget);
      }
      if (request.path.startsWith('/chart/') && request.method === 'GET' && ports.chart) {
        return await ports.chart(pathToken(request.path, '/chart/'), budget);
      }
      return text(404, 'Not found.');
    } catch (error) {
      log.error('triage failed', { reason: errorReason(error) });
      return text(503, 'Triage is unavailable; try again shortly.');
    }
  };
}
