import { describe, expect, it } from 'vitest';
import type { DeliveryResult } from '../../lib/delivery/deliver.js';
import { settledAnswer } from '../../lib/relay/answer.js';
import { answerFor } from '../../lib/relay/lazy-relay-answer.js';

const r = (destination: string, result: DeliveryResult) => ({ destination, result });
const body = (response: { body: string }) => JSON.parse(response.body) as Record<string, unknown>;

describe('one answer for the whole fan-out', () => {
  it('200 only when every destination took the alert', () => {
    const { outcome, response } = answerFor([r('a', { kind: 'delivered' }), r('b', { kind: 'delivered' })]);
    expect([outcome, response.statusCode]).toEqual(['delivered', 200]);
    expect(body(response)).toEqual({ status: 200, delivered: ['a', 'b'] });
  });

  it('202 when the rest waits on the retry queue', () => {
    const { response } = answerFor([r('a', { kind: 'delivered' }), r('b', { kind: 'queued', reason: 'http_500' })]);
    expect(body(response)).toEqual({ status: 202, delivered: ['a'], queued: ['b'] });
  });

  it('502 naming the refusing destinations and reasons, ahead of 202', () => {
    const { response } = answerFor([
      r('a', { kind: 'queued', reason: 'http_500' }),
      r('b', { kind: 'refused', reason: 'channel_is_archived' }),
    ]);
    expect(response.statusCode).toBe(502);
    expect(body(response)['destinations']).toEqual([{ name: 'b', reason: 'channel_is_archived' }]);
  });

  it('503 with Retry-After when some destination has the alert nowhere, ahead of everything else', () => {
    const { outcome, response } = answerFor([
      r('a', { kind: 'refused', reason: 'invalid_payload' }),
      r('b', { kind: 'unheld', reason: 'rate_limited', retryAfterMs: 2_500 }),
      r('c', { kind: 'unheld', reason: 'timeout' }),
    ]);
    expect([outcome, response.statusCode, response.headers['retry-after']]).toEqual(['retryable', 503, '3']);
    expect(body(response)['destinations']).toEqual(['b', 'c']);
  });

  it('asks for at least one second', () => {
    expect(answerFor([r('a', { kind: 'unheld', reason: 'network_error' })]).response.headers['retry-after']).toBe('1');
  });

  it('a 503 names every failed destination with its class, including those that refused for good', () => {
    const { response } = answerFor([
      r('archived', { kind: 'refused', reason: 'channel_is_archived' }),
      r('throttled', { kind: 'unheld', reason: 'rate_limited', retryAfterMs: 1_000 }),
      r('redirecting', { kind: 'refused', reason: 'redirect' }),
      r('teams-sign-in', { kind: 'refused', reason: 'http_401' }),
      r('fine', { kind: 'delivered' }),
    ]);
    expect(response.statusCode).toBe(503);
    expect(body(response)).toMatchObject({
      destinations: ['throttled'],
      failed: [
        { name: 'archived', class: 'refused', reason: 'channel_is_archived' },
        { name: 'throttled', class: 'retryable', reason: 'rate_limited' },
        { name: 'redirecting', class: 'refused', reason: 'redirect' },
        { name: 'teams-sign-in', class: 'refused', reason: 'http_401' },
      ],
      delivered: ['fine'],
    });
  });

  it("202 only when something holds the alert: one that another attempt is posting right now is 503 with its claim's wait", () => {
    const { outcome, response } = answerFor([
      r('a', { kind: 'queued', reason: 'http_500' }),
      r('b', { kind: 'in_progress', retryAfterSeconds: 18 }),
    ]);
    expect([outcome, response.statusCode, response.headers['retry-after']]).toEqual(['in_progress', 503, '18']);
    expect(body(response)).toMatchObject({ in_progress: ['b'], queued: ['a'] });
  });

  it('503 when a destination has the alert but its escalation could not be set waiting: the re-send sets it, and says it is not posted twice', () => {
    const { outcome, response } = answerFor([
      r('finops', { kind: 'delivered', escalationUnscheduled: true }),
      r('team', { kind: 'delivered' }),
      r('digest', { kind: 'grouped' }),
    ]);
    expect([outcome, response.statusCode, response.headers['retry-after']]).toEqual(['escalation_unscheduled', 503, '30']);
    expect(body(response)).toEqual({
      status: 503,
      error: 'escalation_unscheduled',
      message: expect.stringContaining('nothing is posted twice'),
      destinations: ['finops'],
      failed: [{ name: 'finops', class: 'retryable', reason: 'escalation_unscheduled' }],
      delivered: ['finops', 'team'],
      grouped: ['digest'],
    });
    // A re-send that still cannot set it, beside one a chat service cannot take: the chat's answer, naming both.
    const both = answerFor([
      r('finops', { kind: 'duplicate', state: 'queued', escalationUnscheduled: true }),
      r('team', { kind: 'unheld', reason: 'http_503', retryAfterMs: 5_000 }),
    ]);
    expect([both.outcome, both.response.statusCode, both.response.headers['retry-after']]).toEqual(['retryable', 503, '30']);
    expect(body(both.response)).toMatchObject({
      error: 'chat_unavailable',
      destinations: ['team', 'finops'],
      queued: ['finops'],
      duplicate: ['finops'],
    });
  });

  it('200 exactly when every destination has the alert, had it or holds it snoozed, or every one is a repeat; the cold path answers it alone', () => {
    const variants: DeliveryResult[] = [
      { kind: 'delivered' },
      { kind: 'delivered', escalationUnscheduled: true },
      { kind: 'snoozed' },
      { kind: 'duplicate', state: 'delivered' },
      { kind: 'duplicate', state: 'queued' },
      { kind: 'duplicate', state: 'queued', escalationUnscheduled: true },
      { kind: 'queued', reason: 'http_500' },
      { kind: 'grouped' },
      { kind: 'refused', reason: 'http_404' },
      { kind: 'unheld', reason: 'timeout' },
      { kind: 'in_progress', retryAfterSeconds: 5 },
    ];
    const has = (result: DeliveryResult) =>
      !result.escalationUnscheduled &&
      (result.kind === 'delivered' || result.kind === 'snoozed' || (result.kind === 'duplicate' && result.state === 'delivered'));
    const fanOuts = [[], ...variants.map((a) => [a]), ...variants.flatMap((a) => variants.map((b) => [a, b]))];
    for (const fanOut of fanOuts) {
      const results = fanOut.map((result, i) => r(`d${i}`, result));
      const repeats = fanOut.length > 0 && fanOut.every((result) => result.kind === 'duplicate' && !result.escalationUnscheduled);
      const answer = answerFor(results);
      expect(answer.response.statusCode === 200, JSON.stringify(fanOut)).toBe(fanOut.every(has) || repeats);
      // What relay.ts answers without loading lazy-relay-answer.ts is exactly the 200s.
      expect(settledAnswer(results), JSON.stringify(fanOut)).toEqual(answer.response.statusCode === 200 ? answer : undefined);
    }
  });
});
