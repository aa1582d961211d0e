import { createHash } from 'node:crypto';
import type { MessageRef } from '../chat/service.js';
import { isoSeconds } from '../format/alert.js';
import { escapeMrkdwn } from '../format/text.js';
import { triageLine, triageName } from '../format/triage.js';
import type { Logger } from '../log/logger.js';
import { type Metrics, triageActionMetric } from '../metrics/metrics.js';
import { createSlackVerifier } from '../notify/slack/signature.js';
import {
  TRIAGE_ACTION_PREFIX,
  TRIAGE_ACTIONS_BLOCK,
  TRIAGE_STATUS_BLOCK,
  triageButtons,
  triageStatus,
} from '../notify/slack/triage-blocks.js';
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
}

export interface TriageAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/** A Slack Block Kit block of a clicked message, as far as triage reads and writes them. */
export type SlackBlock = Record<string, unknown> & { block_id?: string };

const notRecorded = (mention: string, atSeconds: number) =>
  `:warning: ${mention}'s click at ${isoSeconds(atSeconds)} could not be recorded in time; try again.`;

export interface TriagePorts {
  /** The key that signs triage links; undefined when the stack has none (no links, 404). */
  tokenKey(signal: AbortSignal): Promise<string | undefined>;
  /** The Slack app's signing secret from the relay configuration; undefined when none is configured. */
  slackSigningSecret(signal: AbortSignal): Promise<string | undefined>;
  store: TriageStore;
  /** chat.update of the opening message. */
  updateSlackMessage(opening: MessageRef, blocks: SlackBlock[], text: string, signal: AbortSignal): Promise<void>;
  /** A short follow-up at the token's destination (Google Chat in the anomaly's thread). */
  postFollowUp(token: TriageToken, text: string, signal: AbortSignal): Promise<void>;
  /** The chat service of a configured destination (`slack`, `teams`, `googlechat`), for the metric; undefined when it is gone. */
  destinationTypeOf(name: string): Promise<string | undefined>;
  metrics: Metrics;
  logger: Logger;
  now: () => number;
}

/** What a Slack click may use of the 3 seconds Slack waits: the store, then the update, then the answer. */
export const SLACK_STORE_BUDGET_MS = 1_000;
export const SLACK_UPDATE_BUDGET_MS = 1_200;
const SECRET_BUDGET_MS = 600;

const text = (statusCode: number, body: string): TriageAnswer => ({
  statusCode,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
  body,
});

interface SlackClick {
  action: TriageAction;
  anomalyId: string;
  userId: string;
  userName: string;
  opening: MessageRef;
  blocks: SlackBlock[];
  text: string;
}

function parseClick(rawBody: string): SlackClick | undefined {
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(new URLSearchParams(rawBody).get('payload') ?? '') as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const first = (payload['actions'] as Array<{ action_id?: string; value?: string }> | undefined)?.[0];
  const action = triageActionSchema.safeParse(
    first?.action_id?.startsWith(TRIAGE_ACTION_PREFIX) && first.action_id.slice(TRIAGE_ACTION_PREFIX.length),
  );
  const user = payload['user'] as { id?: string; username?: string; name?: string } | undefined;
  const container = payload['container'] as { channel_id?: string; message_ts?: string } | undefined;
  const message = payload['message'] as { blocks?: SlackBlock[]; text?: string } | undefined;
  if (!action.success || !first?.value || !user?.id || !container?.channel_id || !container.message_ts) return undefined;
  return {
    action: action.data,
    anomalyId: first.value,
    userId: user.id,
    userName: user.username ?? user.name ?? user.id,
    opening: { channel: container.channel_id, ts: container.message_ts },
    blocks: Array.isArray(message?.blocks) ? message.blocks : [],
    text: typeof message?.text === 'string' ? message.text : '',
  };
}

/** The token in a `/triage/<token>` path; a path that does not decode is no token (403, like a forged one). */
function pathToken(path: string): string {
  const raw = path.slice('/triage/'.length);
  try {
    return decodeURIComponent(raw);
  } catch {
    return '';
  }
}

/** Serves the Slack app's clicks and the triage page; decisions only, clients come in as ports. */
export function createTriageHandler(ports: TriagePorts) {
  const verifySlack = createSlackVerifier(ports.now);
  const log = ports.logger;
  const count = (action: TriageAction, destinationType: string) => ports.metrics.add(triageActionMetric(action, destinationType));

  async function slackInteraction(request: TriageRequest, budget: InvocationBudget): Promise<TriageAnswer> {
    const secret = await budget
      .step('signing_secret', SECRET_BUDGET_MS, (signal) => ports.slackSigningSecret(signal))
      .catch((error) => {
        log.error('cannot read the Slack signing secret', { reason: errorReason(error) });
        return undefined;
      });
    if (!secret) return text(401, 'Slack interactivity is not configured.');
    const check = verifySlack(
      { timestamp: request.headers['x-slack-request-timestamp'], signature: request.headers['x-slack-signature'], rawBody: request.body },
      secret,
    );
    if (!check.ok) {
      log.warn('refused a Slack interaction', { reason: check.reason });
      return text(401, 'Signature refused.');
    }
    const click = parseClick(request.body);
    // Slack sends other interactions too (a link button's click): nothing to do, but not an error.
    if (!click) return text(200, '');
    const nowSeconds = Math.floor(ports.now() / 1000);
    const who = triageName(click.userName);
    // Slack's user id renders as a mention of the one who clicked; anything else is shown as text.
    const mention = /^[UW][A-Z0-9]{1,20}$/.test(click.userId) ? `<@${click.userId}>` : escapeMrkdwn(who);
    const kept = (without: string[]) => click.blocks.filter((b) => !without.includes(String(b.block_id)));
    let blocks: SlackBlock[];
    try {
      const outcome = await budget.step('triage_store', SLACK_STORE_BUDGET_MS, async (signal) => {
        // Remembered in the table, so the same signed click replayed into any container is refused.
        const replayKey = `slack-request#${createHash('sha256').update(String(request.headers['x-slack-signature'])).digest('hex')}`;
        if (!(await ports.store.firstUse(replayKey, check.usableUntil + 1, signal))) return 'replayed' as const;
        return ports.store.apply(click.anomalyId, click.action, who, nowSeconds, signal);
      });
      if (outcome === 'replayed') {
        log.warn('refused a Slack interaction', { reason: 'replayed' });
        return text(401, 'Signature refused.');
      }
      // A click that repeats the state changes nothing, and the message already shows it.
      if (outcome.kind === 'unchanged') {
        log.info('triage action repeats the state; nothing changed', { action: click.action, destinationType: 'slack' });
        return text(200, '');
      }
      count(click.action, 'slack');
      log.info('triage action', { action: click.action, destinationType: 'slack' });
      blocks = [
        ...kept([TRIAGE_STATUS_BLOCK, TRIAGE_ACTIONS_BLOCK]),
        triageStatus(triageLine(click.action, mention, nowSeconds)),
        triageButtons(click.anomalyId, outcome.change.state.state === 'open'),
      ];
    } catch (error) {
      // Cut off in time: the click is answered, and the message says it did not take, buttons as they were.
      log.error('cannot record a triage action', { reason: errorReason(error) });
      const actions = click.blocks.filter((b) => b.block_id === TRIAGE_ACTIONS_BLOCK);
      blocks = [...kept([TRIAGE_STATUS_BLOCK, TRIAGE_ACTIONS_BLOCK]), triageStatus(notRecorded(mention, nowSeconds)), ...actions];
    }
    try {
      await budget.step('slack_update', SLACK_UPDATE_BUDGET_MS, (signal) =>
        ports.updateSlackMessage(click.opening, blocks, click.text, signal),
      );
    } catch (error) {
      // The state is recorded; the message shows it with the anomaly's next follow-up.
      log.warn('cannot update the Slack message after a triage action', { reason: errorReason(error) });
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
    const reading = verifyTriageToken(key, pathToken(request.path), ports.now());
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
          await budget.step('follow_up', 3_000, (signal) => ports.postFollowUp(token, notice as string, signal));
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
      if (request.path === '/slack/interactions' && request.method === 'POST') return await slackInteraction(request, budget);
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
