import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, motoUrl } from '../helpers/aws.js';
import { startBundle } from '../helpers/bundle.js';
import { type RelayStack, startRelayStack, titleOf } from '../helpers/relay-stack.js';
import { type receiveAll, waitFor } from '../helpers/sqs.js';

const moto = motoUrl();

describe.skipIf(!moto)('no alert lost: outages, archived channels and a broken queue', () => {
  let stack: RelayStack;
  beforeAll(async () => {
    stack = await startRelayStack(moto!, ['outage', 'archived', 'later', 'both']);
    stack.startRetrying();
  });
  afterAll(() => stack?.stop());

  it('queues deliveries while Slack answers 500 (202) and delivers them all once it is back', { timeout: 120_000 }, async () => {
    const path = stack.paths['outage']!;
    stack.slack.setBehaviour(path, { kind: 'error', status: 500, body: 'rollup_error' });
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await stack.send(`Outage alert #${i}`, 'outage'));
    expect(answers.map((a) => a.statusCode)).toEqual([202, 202, 202, 202, 202]);
    expect(JSON.parse(answers[0]!.body)).toMatchObject({ status: 202, queued: ['outage'] });

    // Still down when the first retry comes (after the 5 s backoff): delivery-retry is refused
    // too, and must queue that alert again, before Slack is back.
    const refused = () => stack.slack.requests.filter((r) => r.path === path && r.answeredStatus === 500).length;
    expect(await waitFor(() => refused() > 5, 30_000)).toBe(true);
    expect(stack.slack.accepted(path)).toHaveLength(0);
    stack.slack.setBehaviour(path, { kind: 'ok' });

    const allIn = await waitFor(() => stack.slack.accepted(path).length >= 5, 90_000);
    expect(allIn).toBe(true);
    expect(new Set(stack.slack.accepted(path).map((r) => titleOf(r.body))).size).toBe(5);
    expect(refused()).toBeGreaterThan(5);
  });

  it('parks a message refused on the first attempt in the dead-letter queue with its reason (502)', async () => {
    stack.slack.setBehaviour(stack.paths['archived']!, { kind: 'error', status: 410, body: 'channel_is_archived' });
    const answer = await stack.send('Archived alert', 'archived');
    expect(answer.statusCode).toBe(502);
    const parked = await waitForParked(stack, 'Archived alert');
    expect(parked.MessageAttributes?.['reason']?.StringValue).toBe('channel_is_archived');
    expect(parked.MessageAttributes?.['destination']?.StringValue).toBe('archived');
    expect(parked.Body).not.toContain('/services/');
  });

  it('parks a queued message whose channel is archived before the retry', { timeout: 60_000 }, async () => {
    const path = stack.paths['later']!;
    // Rate limited with a short Retry-After: queued for a retry that comes after a second, not after the 5 s backoff.
    stack.slack.setBehaviour(path, { kind: 'rate_limited', retryAfterSeconds: 1 });
    expect((await stack.send('Archived later', 'later')).statusCode).toBe(202);
    stack.slack.setBehaviour(path, { kind: 'error', status: 410, body: 'channel_is_archived' });
    const parked = await waitForParked(stack, 'Archived later', 30_000);
    expect(parked.MessageAttributes?.['reason']?.StringValue).toBe('channel_is_archived');
    expect(JSON.parse(parked.Body!).attempt).toBe(2);
  });

  it('answers 503 when the retry queue itself cannot take the message', async () => {
    const broken = await startBundle('webhook-relay', {
      ...awsEnvironment(moto!),
      RELAY_CONFIG_SECRET_ID: `file:${await writeConfig(stack.slack.url('/services/T0/B9/down'))}`,
      DELIVERY_QUEUE_URL: `${moto}/123456789012/no-such-queue`,
    });
    try {
      stack.slack.setBehaviour('/services/T0/B9/down', { kind: 'error', status: 500, body: 'rollup_error' });
      const answer = await broken.invoke<{ statusCode: number }>(
        httpApiEvent({
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ metadata: { object_type: 'x' }, payload: { title: 't' } }),
        }),
      );
      expect(answer.statusCode).toBe(503);
    } finally {
      await broken.stop();
    }
  });
});

async function writeConfig(url: string): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'relay-')), 'config.json');
  await writeFile(file, JSON.stringify({ auth: { method: 'none' }, destinations: { default: { url } } }));
  return file;
}

const parkedSoFar: Awaited<ReturnType<typeof receiveAll>> = [];

async function waitForParked(stack: RelayStack, title: string, timeoutMs = 10_000) {
  const find = () => parkedSoFar.find((m) => JSON.stringify(JSON.parse(m.Body!).message).includes(title));
  const deadline = Date.now() + timeoutMs;
  while (!find() && Date.now() < deadline) {
    const { Messages = [] } = await stack.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: stack.queues.deadLetterQueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        MessageAttributeNames: ['All'],
        VisibilityTimeout: 600,
      }),
    );
    parkedSoFar.push(...Messages);
  }
  const found = find();
  expect(found, `a parked message for "${title}"`).toBeDefined();
  return found!;
}
