import type { MessageRef } from '../chat/service.js';
import type { Destination } from '../config/schema.js';
import { escapeMrkdwn } from '../format/text.js';
import { escapeGoogleChatText } from '../notify/googlechat/format.js';
import { destinationType } from '../notify/kinds.js';
import { escapeTeamsText } from '../notify/teams/format.js';
import { ReasonedError } from '../shared/errors.js';
import type { NodeFetch } from '../transport/fetch-over-node-http.js';
import type { TriageToken } from '../triage-link/token.js';

/** A follow-up was not taken by its chat service. */
export class FollowUpFailedError extends ReasonedError {}

/**
 * What to post where: the payload of a short text follow-up in each service's own form. The
 * text holds a typed name, so it is escaped for each service's markup: no ping, link or card
 * function can form.
 */
export function followUpRequest(
  destination: Destination,
  token: TriageToken,
  line: string,
  opening: MessageRef | undefined,
): { address: string; body: Record<string, unknown>; slackApi: boolean } {
  const type = destinationType(destination);
  const text = type === 'teams' ? escapeTeamsText(line) : type === 'googlechat' ? escapeGoogleChatText(line) : escapeMrkdwn(line);
  const { channel } = destination as { channel?: string };
  if (channel !== undefined) {
    return {
      address: channel,
      body: { channel: opening?.channel ?? channel, text, ...(opening ? { thread_ts: opening.ts } : {}) },
      slackApi: true,
    };
  }
  const url = destination.url as string;
  if (type === 'googlechat') {
    const threaded = token.k !== undefined;
    const target = threaded ? `${url}${url.includes('?') ? '&' : '?'}messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD` : url;
    return { address: target, body: { text, ...(threaded ? { thread: { threadKey: token.k } } : {}) }, slackApi: false };
  }
  if (type === 'teams') {
    return {
      address: url,
      body: {
        type: 'message',
        attachments: [
          {
            contentType: 'application/vnd.microsoft.card.adaptive',
            content: {
              type: 'AdaptiveCard',
              $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
              version: '1.4',
              body: [{ type: 'TextBlock', text, wrap: true }],
            },
          },
        ],
      },
      slackApi: false,
    };
  }
  return { address: url, body: { text }, slackApi: false };
}

/** Posts one follow-up; no redirect is followed, as the URL is itself a secret. */
export async function postFollowUp(
  transport: NodeFetch,
  request: { address: string; body: Record<string, unknown>; slackApi: boolean },
  options: { slackApiUrl: string; botToken?: string; timeoutMs: number },
): Promise<void> {
  const url = request.slackApi ? `${options.slackApiUrl.replace(/\/?$/, '/')}chat.postMessage` : request.address;
  const response = await transport(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      ...(request.slackApi && options.botToken ? { authorization: `Bearer ${options.botToken}` } : {}),
    },
    body: JSON.stringify(request.body),
    redirect: 'error',
    timeoutMs: options.timeoutMs,
  });
  const body = await response.text();
  if (response.status >= 300) throw new FollowUpFailedError(`The chat service answered ${response.status}.`, `status_${response.status}`);
  if (request.slackApi && !(JSON.parse(body) as { ok?: boolean }).ok)
    throw new FollowUpFailedError('Slack refused the follow-up.', 'slack_not_ok');
}
