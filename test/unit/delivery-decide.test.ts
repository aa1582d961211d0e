import { describe, expect, it } from 'vitest';
import { decide, retryDelaySeconds } from '../../lib/delivery/decide.js';

describe('what happens after a post', () => {
  it('a delivered post is done', () => {
    expect(decide({ kind: 'delivered' }, 1, 20)).toEqual({ kind: 'delivered' });
  });

  it('a refusal is parked with the service reason, on any attempt', () => {
    expect(decide({ kind: 'refused', reason: 'channel_is_archived' }, 1, 20)).toEqual({
      kind: 'park',
      reason: 'channel_is_archived',
      failure: 'channel_is_archived',
    });
  });

  it('a retryable failure waits: Retry-After when given, otherwise backoff from 5 s doubling', () => {
    expect(decide({ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 7_200 }, 1, 20)).toEqual({
      kind: 'retry',
      reason: 'rate_limited',
      failure: 'rate_limited',
      delaySeconds: 8,
      retryAfterMs: 7_200,
    });
    const delays = [1, 2, 3, 4].map((n) => decide({ kind: 'retryable', reason: 'http_500' }, n, 20));
    expect(delays.map((d) => (d.kind === 'retry' ? d.delaySeconds : -1))).toEqual([5, 10, 20, 40]);
  });

  it('waits at most 15 minutes, the longest SQS delay', () => {
    expect(retryDelaySeconds({}, 12)).toBe(900);
    expect(retryDelaySeconds({ retryAfterMs: 3_600_000 }, 1)).toBe(900);
    expect(retryDelaySeconds({ retryAfterMs: 0 }, 1)).toBe(0);
  });

  it('parks once the attempts are used up, naming the last failure', () => {
    expect(decide({ kind: 'retryable', reason: 'timeout' }, 20, 20)).toEqual({
      kind: 'park',
      reason: 'attempts_exhausted:timeout',
      failure: 'timeout',
    });
    expect(decide({ kind: 'retryable', reason: 'timeout' }, 19, 20).kind).toBe('retry');
  });

  it('the relay first attempt has no limit of its own', () => {
    expect(decide({ kind: 'retryable', reason: 'timeout' }, 1).kind).toBe('retry');
  });
});
