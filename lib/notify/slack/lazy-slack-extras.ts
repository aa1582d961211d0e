// Slack's parts beyond posting an alert: triage notes, digests, weekly summaries and the app's
// clicks. Bundled on its own (a lazy-*.ts module) and loaded by delivery-retry, triage and summary
// when they need it.
import { createHash } from 'node:crypto';
import type { MessageRef } from '../../chat/service.js';
import { isoSeconds } from '../../format/alert.js';
import { escapeMrkdwn } from '../../format/text.js';
import { triageLine, triageName } from '../../format/triage.js';
import { TRIAGE_ACTIONS } from '../../vocabulary/triage.js';
import type { ChatExtras, Click } from '../kind.js';
import type { SlackDestination } from './config.js';
import { slackDigest, slackDigestLine } from './digest.js';
import { SLACK_LIMITS } from './format.js';
import { verifySlackSignature } from './signature.js';
import { slackSummary } from './summary.js';
import {
  readButtonValue,
  TRIAGE_ACTION_PREFIX,
  TRIAGE_ACTIONS_BLOCK,
  TRIAGE_STATUS_BLOCK,
  triageButtons,
  triageStatus,
} from './triage-blocks.js';

/** A block of a clicked message as Slack sent it back: read for its id, kept as it is. */
type ReceivedBlock = Record<string, unknown> & { block_id?: string };

/** What a click keeps of the message it came from, to edit it again. */
interface ClickedMessage {
  userId: string;
  /** The button's value as clicked: the buttons after the click carry it again. */
  value: string;
  opening: MessageRef;
  blocks: ReceivedBlock[];
  text: string;
}

// Several sections of SLACK_LIMITS.body each (digest.ts), within the message's total; Slack counts characters.
const WEBHOOK_DIGEST_CHARS = 6_600;

const isAction = (value: string): value is Click['action'] => (TRIAGE_ACTIONS as readonly string[]).includes(value);

function parseClick(rawBody: string): Click | undefined {
  let payload: Record<string, unknown>;
  try {
    payload = JSON.parse(new URLSearchParams(rawBody).get('payload') ?? '') as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const first = (payload['actions'] as Array<{ action_id?: string; value?: string }> | undefined)?.[0];
  const action = first?.action_id?.startsWith(TRIAGE_ACTION_PREFIX) ? first.action_id.slice(TRIAGE_ACTION_PREFIX.length) : '';
  const user = payload['user'] as { id?: string; username?: string; name?: string } | undefined;
  const container = payload['container'] as { channel_id?: string; message_ts?: string } | undefined;
  const message = payload['message'] as { blocks?: ReceivedBlock[]; text?: string } | undefined;
  const raw = first?.value;
  const value = raw ? readButtonValue(raw) : undefined;
  if (!isAction(action) || !raw || !value || !user?.id || !container?.channel_id || !container.message_ts) return undefined;
  const clicked: ClickedMessage = {
    userId: user.id,
    value: raw,
    opening: { channel: container.channel_id, ts: container.message_ts },
    blocks: Array.isArray(message?.blocks) ? message.blocks : [],
    text: typeof message?.text === 'string' ? message.text : '',
  };
  return {
    action,
    anomalyId: value.anomalyId,
    userName: user.username ?? user.name ?? user.id,
    message: clicked,
    ...(value.about ? { about: value.about } : {}),
  };
}

export const extras: ChatExtras<SlackDestination> = {
  triageNote(destination, note) {
    const text = escapeMrkdwn(note.line);
    if (destination.channel === undefined) return { text };
    const { opening } = note;
    return {
      call: 'chat.postMessage',
      body: { channel: opening?.channel ?? destination.channel, text, ...(opening ? { thread_ts: opening.ts } : {}) },
    };
  },

  summary: slackSummary,

  digest: (destination) =>
    destination.channel === undefined
      ? {
          render: slackDigestLine,
          chars: WEBHOOK_DIGEST_CHARS,
          breakBytes: 0,
          build: (title, lines, link) => slackDigest(title, lines, destination.mention, link),
        }
      : // The app's message carries the lines in one section (formatSlackMessage).
        { render: slackDigestLine, chars: SLACK_LIMITS.body, breakBytes: 0 },

  interactions: {
    verify(request, secret, nowMs) {
      const signature = request.headers['x-slack-signature'];
      const check = verifySlackSignature(
        { timestamp: request.headers['x-slack-request-timestamp'], signature, rawBody: request.body },
        secret,
        nowMs,
      );
      if (!check.ok) return check;
      return {
        ok: true,
        replayKey: `slack-request#${createHash('sha256').update(String(signature)).digest('hex')}`,
        usableUntil: check.usableUntil,
      };
    },
    parse: parseClick,
    update(click, outcome, atSeconds) {
      const clicked = click.message as ClickedMessage;
      // Slack's user id renders as a mention of the one who clicked; anything else is shown as text.
      const who = /^[UW][A-Z0-9]{1,20}$/.test(clicked.userId) ? `<@${clicked.userId}>` : escapeMrkdwn(triageName(click.userName));
      const kept = clicked.blocks.filter((b) => b.block_id !== TRIAGE_STATUS_BLOCK && b.block_id !== TRIAGE_ACTIONS_BLOCK);
      const blocks =
        'failed' in outcome
          ? // It did not take: the message says so, buttons as they were, so it can be tried again.
            [
              ...kept,
              triageStatus(`:warning: ${who}'s click at ${isoSeconds(atSeconds)} could not be recorded in time; try again.`),
              ...clicked.blocks.filter((b) => b.block_id === TRIAGE_ACTIONS_BLOCK),
            ]
          : [...kept, triageStatus(triageLine(click.action, who, atSeconds)), triageButtons(clicked.value, outcome.state === 'open')];
      const { channel, ts } = clicked.opening;
      return { to: { channel }, payload: { call: 'chat.update', body: { channel, ts, text: clicked.text, blocks } } };
    },
  },
};
