import { triageLine, triageName } from '../format/triage.js';
import type { Logger } from '../log/logger.js';
import { type Metrics, triageActionMetric } from '../metrics/metrics.js';
import type { Interactions } from '../notify/kind.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { type TriageToken, verifyTriageToken } from '../triage-link/token.js';
import type { TriageAction } from '../vocabulary/triage.js';
import { PAGE_HEADERS, renderTriagePage } from './page.js';
import { triageActionSchema } from './state.js';
import type { TriageStore } from './store.js';

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

const text = (statusCode: number, body: string): TriageAnswer => ({
  statusCode,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  body,
});

/** The token in a `/triage/<token>` path; a path that does not decode is no token (403, like a forged one). */
function pathToken(path: string): string {
  const raw = path.slice('/triage/'.length);
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
    } catch (error) {
      // Cut off in time: the click is answered, and the message says it did not take.
      log.error('cannot record a triage action', { reason: errorReason(error) });
      edited = interactions.update(click, { failed: true }, nowSeconds);
    }
    try {
      await budget.step('slack_update', SLACK_UPDATE_BUDGET_MS, (signal) => ports.postAsApp(edited.to, edited.payload, signal));
    } catch (error) {
      // The state is recorded; the message shows it with the anomaly's next follow-up.
      log.warn('cannot update the message after a triage action', { reason: errorReason(error) });
    }
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
    const token = reading.token;
    const nowSeconds = Math.floor(ports.now() / 1000);
    let notice: string | undefined;
    if (request.method === 'POST') {
      const form = new URLSearchParams(request.body);
      const action = triageActionSchema.safeParse(form.get('action'));
      if (!action.success) return text(400, 'Unknown action.');
      const who = triageName(form.get('name') ?? '');
      const outcome = await budget.step('triage_store', SLACK_STORE_BUDGET_MS * 2, (signal) =>
        ports.store.apply(token.a, action.data, who, nowSeconds, signal),
      );
      if (outcome.kind === 'unchanged') notice = 'Nothing changed: the anomaly is already in that state.';
      else {
        const type = (await ports.destinationTypeOf(token.d).catch(() => undefined)) ?? 'unknown';
        count(action.data, type);
        log.info('triage action', { action: action.data, destinationType: type });
        notice = triageLine(action.data, who, nowSeconds);
        try {
          const line = notice;
          // The link as the relay signed it: the verified token, on the origin this request came in on.
          const link = request.origin ? { link: `${request.origin}/triage/${supplied}` } : {};
          await budget.step('follow_up', 3_000, (signal) =>
            ports.postFollowUp(token, { action: action.data, line, by: who, at: nowSeconds, ...link }, signal),
          );
        } catch (error) {
          log.warn('cannot post the triage follow-up', { reason: errorReason(error) });
          notice += ' (the chat could not be told)';
        }
      }
    }
    const record = await budget.step('triage_read', SLACK_STORE_BUDGET_MS * 2, (signal) => ports.store.read(token.a, signal));
    return {
      statusCode: 200,
      headers: { ...PAGE_HEADERS },
      body: renderTriagePage({ title: token.t, account: token.c, record, nowSeconds, ...(notice ? { notice } : {}) }),
    };
  }

  return async (request: TriageRequest, budget: InvocationBudget): Promise<TriageAnswer> => {
    try {
      const app = request.method === 'POST' ? ports.interactionsAt(request.path) : undefined;
      if (app) return await interaction(request, budget, app);
      if (request.path.startsWith('/triage/') && (request.method === 'GET' || request.method === 'POST')) {
        return await triagePage(request, budget);
      }
      return text(404, 'Not found.');
    } catch (error) {
      log.error('triage failed', { reason: errorReason(error) });
      return text(503, 'Triage is unavailable; try again shortly.');
    }
  };
}
