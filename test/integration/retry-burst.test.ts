import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { motoUrl } from '../helpers/aws.js';
import { type Answer, type RelayStack, startRelayStack, titleOf } from '../helpers/relay-stack.js';
import { waitFor } from '../helpers/sqs.js';

const moto = motoUrl();
const COUNT = 100;
// Slack takes one message per second per webhook and the retry worker spaces its posts 1.1 s
// apart. Both run on a clock twenty times faster here: the fake webhook's window is 50 ms and
// the worker's pace (DELIVERY_MIN_INTERVAL_MS) 55 ms, the same margin. 100 alerts sent at once
// still outnumber what the webhook takes in that window a hundredfold, so most must be queued
// and delivered later, exactly as at full scale. Retry-After stays 1 s, as Slack sends it, so
// honouring it is shown at full size.
const WINDOW_MS = 50;
const WORKER_PACE_MS = 55;
// After the burst only the retry worker posts; a few 429s at that point (another poster on the
// same webhook, say) make sure the worker's handling of Retry-After is exercised, not assumed.
const LATE_RATE_LIMITS = 3;
const TITLE = 'Burst alert #';
/** The platform gives up on an alert after this many sends. */
const MAX_SENDS = 5;

describe.skipIf(!moto)('no alert lost: a burst meets Slack’s one-message-per-second limit', () => {
  let stack: RelayStack;
  beforeAll(async () => {
    stack = await startRelayStack(moto!, [], { DELIVERY_MIN_INTERVAL_MS: String(WORKER_PACE_MS) });
    stack.slack.setBehaviour(stack.paths['default']!, { kind: 'one_per_second', windowMs: WINDOW_MS });
  });
  afterAll(() => stack?.stop());

  it(`delivers all ${COUNT} alerts sent within one second, none more than twice, honouring Retry-After`, { timeout: 120_000 }, async () => {
    const path = stack.paths['default']!;
    // The cost platform's part: what the relay answers 503 (nothing holds it: here, the queue did
    // not confirm in time) is sent again after the answer's Retry-After. The burst's invocations
    // share one process here, not a container each as on Lambda, so on a busy machine some queue
    // calls rightly outlast their deadline.
    const sends = new Map<string, number>();
    const send = async (title: string): Promise<Answer> => {
      for (;;) {
        sends.set(title, (sends.get(title) ?? 0) + 1);
        const answer = await stack.send(title);
        if (answer.statusCode !== 503 || sends.get(title)! >= MAX_SENDS) return answer;
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers['retry-after']) * 1000));
      }
    };
    const answers = await Promise.all(Array.from({ length: COUNT }, (_, i) => send(`${TITLE}${i}`)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.every((s) => s === 200 || s === 202)).toBe(true);
    expect(statuses.filter((s) => s === 202).length).toBeGreaterThan(0);
    const burstEnded = Date.now();

    // The relay answers without waiting its turn: one post per time the alert was sent, each one
    // after the Retry-After the one before was answered with.
    const byTitle = new Map<string, number[]>();
    for (const r of stack.slack.requests) {
      if (r.path !== path) continue;
      byTitle.set(titleOf(r.body), [...(byTitle.get(titleOf(r.body)) ?? []), r.receivedAt]);
    }
    for (const [title, times] of byTitle) {
      expect(times.length, title).toBeLessThanOrEqual(sends.get(title.replace(':rotating_light: ', '')) ?? 0);
      for (let i = 1; i < times.length; i++)
        expect(times[i]! - times[i - 1]!, `${title}: relay's post after Retry-After: 1`).toBeGreaterThanOrEqual(1_000);
    }

    stack.slack.queue(path, { kind: 'rate_limited', retryAfterSeconds: 1 }, LATE_RATE_LIMITS);
    stack.startRetrying();
    const allIn = await waitFor(() => new Set(stack.slack.accepted(path).map((r) => titleOf(r.body))).size >= COUNT, 90_000, 100);
    expect(allIn).toBe(true);

    const perTitle = new Map<string, number>();
    for (const r of stack.slack.accepted(path)) perTitle.set(titleOf(r.body), (perTitle.get(titleOf(r.body)) ?? 0) + 1);
    for (let i = 0; i < COUNT; i++) {
      const n = perTitle.get(`:rotating_light: ${TITLE}${i}`) ?? 0;
      expect(n, `alert #${i}`).toBeGreaterThanOrEqual(1);
      // Twice at most per time it was sent: a post whose answer came too late is posted again.
      expect(n, `alert #${i}`).toBeLessThanOrEqual(2 * sends.get(`${TITLE}${i}`)!);
    }

    // After the burst, every post comes from the retry function, which must wait out each Retry-After.
    const later = stack.slack.requests.filter((r) => r.path === path && r.receivedAt >= burstEnded);
    expect(later.filter((r) => r.answeredStatus === 429).length).toBeGreaterThanOrEqual(LATE_RATE_LIMITS);
    for (const [i, r] of later.entries()) {
      if (r.answeredStatus !== 429) continue;
      const next = later[i + 1];
      if (next) expect(next.receivedAt - r.receivedAt, 'post after a 429 with Retry-After: 1').toBeGreaterThanOrEqual(1_000);
    }
    expect(stack.retry.output()).not.toContain('/services/');
  });
});
