import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { motoUrl } from '../helpers/aws.js';
import { startRelayStack, titleOf, type RelayStack } from '../helpers/relay-stack.js';
import { waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const COUNT = 100;

describe.skipIf(!moto)('no alert lost: a burst meets Slack’s one-message-per-second limit', () => {
  let stack: RelayStack;
  beforeAll(async () => {
    stack = await startRelayStack(moto!);
    stack.slack.setBehaviour(stack.paths['default']!, { kind: 'one_per_second' });
  });
  afterAll(() => stack?.stop());

  it(`delivers all ${COUNT} alerts sent within one second, none more than twice, honouring Retry-After`, { timeout: 300_000 }, async () => {
    const started = Date.now();
    const answers = await Promise.all(Array.from({ length: COUNT }, (_, i) => stack.send(`Burst alert #${i}`)));
    expect(Date.now() - started).toBeLessThan(5_000);
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.every((s) => s === 200 || s === 202)).toBe(true);
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(0);
    const burstEnded = Date.now();

    stack.startRetrying();
    const path = stack.paths['default']!;
    const allIn = await waitFor(() => new Set(stack.slack.accepted(path).map((r) => titleOf(r.body))).size >= COUNT, 240_000, 500);
    expect(allIn).toBe(true);

    const perTitle = new Map<string, number>();
    for (const r of stack.slack.accepted(path)) perTitle.set(titleOf(r.body), (perTitle.get(titleOf(r.body)) ?? 0) + 1);
    for (let i = 0; i < COUNT; i++) {
      const n = perTitle.get(`:rotating_light: Burst alert #${i}`) ?? 0;
      expect(n, `alert #${i}`).toBeGreaterThanOrEqual(1);
      expect(n, `alert #${i}`).toBeLessThanOrEqual(2);
    }

    // After the burst, every post comes from the retry function, which must wait out each Retry-After.
    const later = stack.slack.requests.filter((r) => r.path === path && r.receivedAt >= burstEnded);
    for (const [i, r] of later.entries()) {
      if (r.answeredStatus !== 429) continue;
      const next = later[i + 1];
      if (next) expect(next.receivedAt - r.receivedAt, 'post after a 429 with Retry-After: 1').toBeGreaterThanOrEqual(1_000);
    }
    expect(stack.retry.output()).not.toContain('/services/');
  });
});
