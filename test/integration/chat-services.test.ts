import { GetQueueAttributesCommand, type Message, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import hostile from '../../events/bad/hostile-text.json' with { type: 'json' };
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { googleChatLiveForms, googleChatViolations, teamsLiveMarkup, teamsTexts, teamsViolations } from '../helpers/chat-limits.js';
import { type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { slackLimitViolations } from '../helpers/slack-limits.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';
import { createQueues, type Poller, sqsClient, startPoller, type TestQueues, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const SECRETS = ['TEAMS-SIG-SECRET', 'GCHAT-KEY-SECRET', 'GCHAT-TOKEN-SECRET', 'SLACK-SECRET-PATH'];

interface Answer {
  statusCode: number;
  body: string;
}

/** Teams and Google Chat destinations, each on its own path, so a test can set how each answers. */
const TEAMS_PATHS = {
  fan: '/workflows/fan/triggers/manual/paths/invoke',
  busy: '/workflows/busy/triggers/manual/paths/invoke',
  off: '/workflows/off/triggers/manual/paths/invoke',
};
const CHAT_PATHS = { fan: '/v1/spaces/FAN/messages', busy: '/v1/spaces/BUSY/messages', gone: '/v1/spaces/GONE/messages' };
const SLACK_FAN = '/services/T0/B0/SLACK-SECRET-PATH';

describe.skipIf(!moto)('Teams and Google Chat destinations: the relay and delivery-retry bundles against loopback chat services', () => {
  let slack: FakeSlack;
  let teams: FakeChat;
  let chat: FakeChat;
  let queues: TestQueues;
  let relay: RunningBundle;
  let retry: RunningBundle;
  let poller: Poller;
  const sqs = sqsClient(moto ?? 'http://127.0.0.1:1');

  const send = (accountId: string, title: string, extra: Record<string, unknown> = {}) =>
    relay.invoke<Answer>(
      httpApiEvent({
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-22T10:00:00Z' },
          payload: {
            title,
            message: 'Daily cost of Amazon EC2 rose 212%',
            account_id: accountId,
            account_name: 'Production payer',
            cloud_provider_type: 'aws',
            ...extra,
          },
        }),
      }),
      { timeoutMs: 15_000 },
    );

  beforeAll(async () => {
    [slack, teams, chat] = await Promise.all([startFakeSlack(), startFakeTeams(), startFakeGoogleChat()]);
    const teamsUrl = (path: string) => teams.url(path);
    const chatUrl = (path: string) => chat.url(path);
    const secretId = await createSecret(secretsClient(moto!), {
      auth: { method: 'none' },
      destinations: {
        default: { url: slack.url(SLACK_FAN) },
        teams: { type: 'teams', url: teamsUrl(TEAMS_PATHS.fan), mention: { id: 'jane@example.com', name: 'Jane Doe' } },
        chat: { type: 'googlechat', url: chatUrl(CHAT_PATHS.fan), mention: '<users/all>' },
        teamsBusy: { type: 'teams', url: teamsUrl(TEAMS_PATHS.busy) },
        teamsOff: { type: 'teams', url: teamsUrl(TEAMS_PATHS.off) },
        chatBusy: { type: 'googlechat', url: chatUrl(CHAT_PATHS.busy) },
        chatGone: { type: 'googlechat', url: chatUrl(CHAT_PATHS.gone) },
      },
      routes: [
        { when: { accountId: ['fan'] }, to: ['default', 'teams', 'chat'] },
        ...['teamsBusy', 'teamsOff', 'chatBusy', 'chatGone'].map((name) => ({ when: { accountId: [name] }, to: [name] })),
      ],
    });
    queues = await createQueues(sqs, 30);
    const env = {
      ...awsEnvironment(moto!),
      RELAY_CONFIG_SECRET_ID: secretId,
      DELIVERY_QUEUE_URL: queues.deliveryQueueUrl,
      DEAD_LETTER_QUEUE_URL: queues.deadLetterQueueUrl,
      SLACK_TIMEOUT_MS: '2000',
    };
    relay = await startBundle('webhook-relay', env);
    retry = await startBundle('delivery-retry', env);
    poller = startPoller(sqs, queues, retry);
  });

  afterAll(async () => {
    await poller?.stop();
    await Promise.all([relay?.stop(), retry?.stop()]);
    await Promise.all([slack?.close(), teams?.close(), chat?.close()]);
  });

  it('fans one alert out to Slack, Teams and Google Chat, each in its own format, with its own trusted mention', async () => {
    const answer = await send('fan', hostile.payload.title, { message: hostile.payload.message });
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 200, delivered: ['default', 'teams', 'chat'] });

    const [slackPost] = slack.accepted(SLACK_FAN);
    expect(slackLimitViolations(slackPost!.body as never)).toEqual([]);

    const [card] = teams.accepted(TEAMS_PATHS.fan);
    expect(teamsViolations(card!.body)).toEqual([]);
    const [title, mention, ...rest] = teamsTexts(card!.body);
    expect(mention).toBe('<at>Jane Doe</at>');
    // The time is the relay's own card function; everything from the sender is inert.
    expect(rest.pop()).toBe('🕒 {{DATE(2026-11-22T10:00:00Z, SHORT)}} {{TIME(2026-11-22T10:00:00Z)}}');
    for (const text of [title!, ...rest]) expect(teamsLiveMarkup(text), text).toEqual([]);
    expect(card!.headers['content-type']).toBe('application/json; charset=utf-8');

    const [message] = chat.accepted(CHAT_PATHS.fan);
    expect(googleChatViolations(message!.body)).toEqual([]);
    expect(googleChatLiveForms(message!.body, '<users/all>')).toEqual([]);
    expect((message!.body as { text: string }).text.startsWith('<users/all> ')).toBe(true);
    expect(message!.query).toBe(
      '?key=GCHAT-KEY-SECRET&token=GCHAT-TOKEN-SECRET%3D&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD',
    );
  });

  it('Google Chat: the same kind, account and title go to one thread; another title to another', async () => {
    await send('fan', 'EC2 spend up');
    await send('fan', 'EC2 spend up');
    await send('fan', 'S3 spend up');
    const keys = chat
      .accepted(CHAT_PATHS.fan)
      .slice(-3)
      .map((r) => (r.body as { thread: { threadKey: string } }).thread.threadKey);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).not.toBe(keys[0]);
  });

  it('Teams throttled (429 + Retry-After): queued (202), posted once by delivery-retry after the wait', { timeout: 60_000 }, async () => {
    teams.queue(TEAMS_PATHS.busy, { kind: 'throttled', retryAfterSeconds: 2 });
    const answer = await send('teamsBusy', 'Teams throttled alert');
    expect(answer.statusCode).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ queued: ['teamsBusy'] });
    expect(await waitFor(() => teams.accepted(TEAMS_PATHS.busy).length >= 1, 40_000)).toBe(true);
    // Once the queue has let go of the message, nothing can post it again.
    expect(await waitFor(queueIsEmpty, 10_000)).toBe(true);
    const posts = teams.requests.filter((r) => r.path === TEAMS_PATHS.busy);
    expect(posts.map((r) => r.answeredStatus)).toEqual([429, 202]);
    expect(posts[1]!.receivedAt - posts[0]!.receivedAt).toBeGreaterThanOrEqual(1_900);
    expect(teamsTexts(posts[1]!.body)[0]).toContain('Teams throttled alert');
  });

  it('Google Chat RESOURCE_EXHAUSTED (no Retry-After): queued with backoff, posted once by delivery-retry', {
    timeout: 60_000,
  }, async () => {
    chat.queue(CHAT_PATHS.busy, { kind: 'throttled' });
    const answer = await send('chatBusy', 'Chat throttled alert');
    expect(answer.statusCode).toBe(202);
    expect(await waitFor(() => chat.accepted(CHAT_PATHS.busy).length >= 1, 40_000)).toBe(true);
    expect(await waitFor(queueIsEmpty, 10_000)).toBe(true);
    const posts = chat.requests.filter((r) => r.path === CHAT_PATHS.busy);
    expect(posts.map((r) => r.answeredStatus)).toEqual([429, 200]);
    // The core's first backoff is 5 s.
    expect(posts[1]!.receivedAt - posts[0]!.receivedAt).toBeGreaterThanOrEqual(4_900);
  });

  it('refusals are parked with the service reason and answered 502, naming the destination, never its URL', async () => {
    teams.setBehaviour(TEAMS_PATHS.off, { kind: 'error', status: 400, code: 'WorkflowTriggerIsNotEnabled' });
    chat.setBehaviour(CHAT_PATHS.gone, { kind: 'error', status: 403, code: 'PERMISSION_DENIED' });
    const off = await send('teamsOff', 'Flow turned off');
    const gone = await send('chatGone', 'Webhook deleted');
    expect([off.statusCode, gone.statusCode]).toEqual([502, 502]);
    expect(JSON.parse(off.body)).toMatchObject({
      error: 'chat_refused',
      destinations: [{ name: 'teamsOff', reason: 'workflow_trigger_is_not_enabled' }],
    });
    expect(JSON.parse(gone.body)).toMatchObject({
      error: 'chat_refused',
      destinations: [{ name: 'chatGone', reason: 'permission_denied' }],
    });

    const parked = await receiveParked(2);
    const reasons = Object.fromEntries(
      parked.map((m) => [m.MessageAttributes?.['destination']?.StringValue, m.MessageAttributes?.['reason']?.StringValue]),
    );
    expect(reasons).toEqual({ teamsOff: 'workflow_trigger_is_not_enabled', chatGone: 'permission_denied' });
    for (const m of parked) for (const secret of SECRETS) expect(m.Body).not.toContain(secret);
    for (const secret of SECRETS) expect(off.body + gone.body).not.toContain(secret);
  });

  it('no queued message and no log line holds a webhook URL or its secret parts', () => {
    expect(poller.bodies.length).toBeGreaterThanOrEqual(2);
    const everything = [...poller.bodies, relay.output(), retry.output()].join('\n');
    for (const secret of SECRETS) expect(everything).not.toContain(secret);
    expect(everything).not.toContain('127.0.0.1');
  });

  /** No message on the retry queue in any state: waiting, delayed or being worked on. */
  async function queueIsEmpty(): Promise<boolean> {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: queues.deliveryQueueUrl, AttributeNames: ['All'] }),
    );
    const held = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed', 'ApproximateNumberOfMessagesNotVisible'] as const;
    return held.every((name) => Number(Attributes[name] ?? 0) === 0);
  }

  async function receiveParked(count: number): Promise<Message[]> {
    const found: Message[] = [];
    const deadline = Date.now() + 15_000;
    while (found.length < count && Date.now() < deadline) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queues.deadLetterQueueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
          VisibilityTimeout: 600,
        }),
      );
      found.push(...Messages);
    }
    return found;
  }
});
