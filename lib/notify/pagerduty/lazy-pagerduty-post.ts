// Imported with import() by service.ts on the first post to a PagerDuty destination, and bundled
// on its own (a lazy-*.ts module). It posts with the port's posting (KindSettings.posting).
import type { PostAnswer, Posting } from '../../chat/post-json.js';
import type { PostOptions, PostOutcome } from '../../chat/service.js';
import { outcomeOfStatus } from '../../chat/status.js';
import type { KindEnvironment } from '../kind.js';
import { pagerDutyEvents } from './format.js';
import type { PagerDutyEvent, PagerDutyPost } from './payload.js';

/** PagerDuty's own endpoint, unless PAGERDUTY_EVENTS_URL says otherwise (tests and `npm start`). */
export const DEFAULT_PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

// PagerDuty names its errors in `status` with a few words ("invalid event"): short words alone
// pass, so nothing else of an answer (and no 32-character key echoed back) becomes a reason.
const STATUS_WORDS = /^[A-Za-z]{1,20}(?: [A-Za-z]{1,20}){0,3}$/;

function statusWord(body: string): string | undefined {
  try {
    const status = (JSON.parse(body) as { status?: unknown } | null)?.status;
    return typeof status === 'string' && STATUS_WORDS.test(status) ? status.toLowerCase().replace(/ /g, '_') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reduces an Events API answer to an outcome by the status rule every kind shares (202 delivered;
 * 400 an invalid event, 401, 403 and 404 a wrong endpoint or key refused). PagerDuty documents no
 * wait for a 429 and asks to back off, so without a Retry-After the core's backoff applies. The
 * reason is PagerDuty's status word, or the status.
 */
export function classifyPagerDutyAnswer({ status, body, retryAfter }: PostAnswer): PostOutcome {
  return outcomeOfStatus(status, statusWord(body) ?? `http_${status}`, retryAfter);
}

export interface PagerDutyTools {
  /** The function's environment as read: PAGERDUTY_EVENTS_URL, when set, is where events go. */
  env?: KindEnvironment | undefined;
  posting: Posting;
}

/** The event as posted: the routing key first, from the destination's address, never from a payload. */
type PagerDutyBody = PagerDutyEvent & { routing_key: string };

/**
 * Posts an alert, made into its events here, or events made already (a triage note), in order and
 * within the post's one deadline; the first that PagerDuty does not take is the outcome. An alert
 * with nothing to send (a follow-up after Expected) is delivered: PagerDuty has what it should.
 */
export async function postEvent(
  tools: PagerDutyTools,
  routingKey: string,
  payload: PagerDutyPost,
  options: PostOptions,
): Promise<PostOutcome> {
  const configured = tools.env?.['PAGERDUTY_EVENTS_URL'];
  const url = typeof configured === 'string' ? configured : DEFAULT_PAGERDUTY_EVENTS_URL;
  const events = Array.isArray(payload) ? pagerDutyEvents(payload) : payload.events;
  const post = tools.posting.json<PagerDutyBody>(classifyPagerDutyAnswer);
  const end = performance.now() + options.timeoutMs;
  for (const event of events) {
    const timeoutMs = Math.max(1, Math.floor(end - performance.now()));
    const outcome = await post(url, { routing_key: routingKey, ...event }, { ...options, timeoutMs });
    if (outcome.kind !== 'delivered') return outcome;
  }
  return { kind: 'delivered' };
}
