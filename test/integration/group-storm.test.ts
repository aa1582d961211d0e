import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { motoUrl } from '../helpers/aws.js';
import { createDedupTable, type RelayStack, startRelayStack } from '../helpers/relay-stack.js';
import { type ReceivedMessage, slackLimitViolations } from '../helpers/slack-limits.js';
import { waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const COUNT = 120;
// The shortest wait the option takes: the group closes ten seconds after the first alert.
const WAIT_SECONDS = 10;

describe.skipIf(!moto)('an alert storm to a grouped Slack destination, through the relay and delivery-retry bundles', () => {
  let stack: RelayStack;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  beforeAll(async () => {
    table = await createDedupTable(moto!);
    stack = await startRelayStack(moto!, [], { DEDUP_TABLE_NAME: table.name }, { default: { group: { waitSeconds: WAIT_SECONDS } } });
    // Slack's own limit: one message a second per webhook, 429 above it.
    stack.slack.setBehaviour(stack.paths['default']!, { kind: 'one_per_second' });
    stack.startRetrying();
  });
  afterAll(() => stack?.stop());

  it(`folds ${COUNT} alerts into at most 3 posts naming every alert, and forgets their text`, { timeout: 90_000 }, async () => {
    const path = stack.paths['default']!;
    // Ten at a time, as a storm arrives over a few seconds rather than in one instant.
    const answers = [];
    for (let i = 0; i < COUNT; i += 10) {
      answers.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => stack.send(`Storm alert #${i + j}`)))));
    }
    for (const answer of answers) {
      expect(answer.statusCode).toBe(202);
      expect(JSON.parse(answer.body)).toMatchObject({ grouped: ['default'] });
    }
    expect(stack.slack.requests.filter((r) => r.path === path)).toHaveLength(0);

    const named = () => {
      const text = stack.slack
        .accepted(path)
        .map((r) => JSON.stringify(r.body))
        .join('\n');
      return Array.from({ length: COUNT }, (_, i) => i).every((i) => text.includes(`Storm alert #${i} ·`));
    };
    expect(await waitFor(named, 60_000, 200)).toBe(true);
    const posts = stack.slack.accepted(path);
    expect(posts.length).toBeLessThanOrEqual(3);
    for (const post of posts) expect(slackLimitViolations(post.body as ReceivedMessage)).toEqual([]);

    // Flushed: the group's item keeps no alert text once it is posted.
    const flushed = async () => {
      const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name }));
      const group = Items.find((item) => item['id']?.S?.startsWith('group#'));
      return group?.['state']?.S === 'flushed' && group['alerts'] === undefined;
    };
    expect(await waitFor(flushed, 10_000, 200)).toBe(true);
    const { Items = [] } = await table.dynamo.send(new ScanCommand({ TableName: table.name }));
    expect(JSON.stringify(Items)).not.toContain(path);
    expect(stack.retry.output()).not.toContain('/services/');
    expect(stack.relay.output()).not.toContain('/services/');
  });
});
