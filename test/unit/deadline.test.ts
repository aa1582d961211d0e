import { describe, expect, it } from 'vitest';
import { ANSWER_RESERVE_MS, DeadlineExceededError, invocationBudget } from '../../lib/shared/deadline.js';

const left = (ms: number) => invocationBudget({ getRemainingTimeInMillis: () => ms });

describe('one budget per invocation', () => {
  it('gives a step its cap while there is time, and never the answer reserve or what must follow', () => {
    expect(left(10_000).ms(4_000)).toBe(4_000);
    expect(left(3_000).ms(4_000)).toBe(3_000 - ANSWER_RESERVE_MS);
    expect(left(3_000).ms(4_000, 2_000)).toBe(3_000 - ANSWER_RESERVE_MS - 2_000);
    expect(left(100).ms(4_000)).toBe(0);
    expect(left(3_000).fits(3_000 - ANSWER_RESERVE_MS)).toBe(true);
    expect(left(3_000).fits(3_001 - ANSWER_RESERVE_MS)).toBe(false);
  });

  it('reads the time left at each step, not once', () => {
    let remaining = 10_000;
    const budget = invocationBudget({ getRemainingTimeInMillis: () => remaining });
    expect(budget.ms(4_000)).toBe(4_000);
    remaining = 1_500;
    expect(budget.ms(4_000)).toBe(1_000);
  });

  it('a value that is already there comes back as it is, not as a promise', () => {
    const loaded = { config: 'cached' };
    expect(left(10_000).stepIfPending('configuration', 10, loaded)).toBe(loaded);
  });

  it("a promise is waited for at most its step's time, then fails with a named deadline and an aborted signal", async () => {
    expect(await left(10_000).stepIfPending('configuration', 1_000, Promise.resolve('read'))).toBe('read');
    const never = new Promise<string>(() => undefined);
    const failure = await Promise.resolve(left(10_000).stepIfPending('authentication', 20, never)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DeadlineExceededError);
    expect(failure).toMatchObject({ reason: 'authentication_deadline' });
    let seen: AbortSignal | undefined;
    const stepped = await left(ANSWER_RESERVE_MS + 20)
      .step('dedup_table', 1_000, (signal) => {
        seen = signal;
        return never;
      })
      .catch((error: unknown) => error);
    expect(stepped).toMatchObject({ reason: 'dedup_table_deadline' });
    expect(seen?.aborted).toBe(true);
  });
});
