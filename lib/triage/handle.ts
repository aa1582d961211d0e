import type { MessageRef } from '../chat/service.js';
import type { Logger } from '../log/logger.js';
import { type Metrics, triageActionMetric } from '../metrics/metrics.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { errorReason } from '../shared/errors.js';
import { PAGE_HEADERS, renderTriagePage } from './page.js';
import { createSlackVerifier } from './slack-signature.js';
import { applyTriage, describeTriage, type TriageAction, triageActionSchema } from './state.js';
import type { TriageStore } from './store.js';
import { type TriageToken, verifyTriageToken } from './token.js';

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

/** A Slack Block Kit block, as far as triage reads and writes them. */
export type SlackBlock = Record<string, unknown> & { block_id?: string };

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

export const TRIAGE_ACTION_PREFIX = 'triage_';

const BUTTONS: Array<[TriageAction, string]> = [
  ['acknowledge', 'Acknowledge'],
  ['expected', 'Expected'],
  ['snooze', 'Snooze 24 h'],
];

/** The buttons a Slack app message carries: the three actions while open, "Reopen" once one was used. */
export function triageButtons(anomalyId: string, open: boolean): SlackBlock {
  const pairs: Array<[TriageAction, string]> = open ? BUTTONS : [['reopen', 'Reopen']];
  return {
    type: 'actions',
    block_id: 'triage_actions',
    elements: pairs.map(([action, label]) => ({
      type: 'button',
      action_id: `${TRIAGE_ACTION_PREFIX}${action}`,
      text: { type: 'plain_text', text: label },
      value: anomalyId,
    })),
  };
}

// Slack's mrkdwn needs only these three escaped.
const slackEscape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

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
  const action = triageActionSchema.safeParse(first?.action_id?.slice(TRIAGE_ACTION_PREFIX.length));
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
    const state = applyTriage(click.action, click.userName, nowSeconds);
    try {
      await budget.step('triage_store', SLACK_STORE_BUDGET_MS, (signal) =>
        ports.store.apply(click.anomalyId, state, { who: click.userName, action: click.action, at: nowSeconds }, signal),
      );
    } catch (error) {
      log.error('cannot record a triage action', { reason: errorReason(error) });
      return text(200, '');
    }
    count(click.action, 'slack');
    log.info('triage action', { action: click.action, destinationType: 'slack' });
    const line = describeTriage(click.action, `<@${click.userId}>`, nowSeconds);
    const blocks = [
      ...click.blocks.filter((b) => b.block_id !== 'triage_actions' && b.block_id !== 'triage_status'),
      {
        type: 'context',
        block_id: 'triage_status',
        elements: [{ type: 'mrkdwn', text: slackEscape(line).replace(/&lt;@(U\w+)&gt;/, '<@$1>') }],
      },
      triageButtons(click.anomalyId, state.state === 'open'),
    ];
    try {
      await budget.step('slack_update', SLACK_UPDATE_BUDGET_MS, (signal) =>
        ports.updateSlackMessage(click.opening, blocks, click.text, signal),
      );
    } catch (error) {
      // The state is recorded; the message catches up on the next click or follow-up.
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
    const reading = verifyTriageToken(key, decodeURIComponent(request.path.slice('/triage/'.length)), ports.now());
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
      const who = (form.get('name') ?? '').replace(/\s+/g, ' ').trim().slice(0, 80) || 'someone';
      const state = applyTriage(action.data, who, nowSeconds);
      await budget.step('triage_store', SLACK_STORE_BUDGET_MS * 2, (signal) =>
        ports.store.apply(token.a, state, { who, action: action.data, at: nowSeconds }, signal),
      );
      count(action.data, 'page');
      log.info('triage action', { action: action.data, destinationType: 'page' });
      notice = describeTriage(action.data, who, nowSeconds);
      try {
        await budget.step('follow_up', 3_000, (signal) => ports.postFollowUp(token, notice as string, signal));
      } catch (error) {
        log.warn('cannot post the triage follow-up', { reason: errorReason(error) });
        notice += ' (the chat could not be told)';
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
