import { describe, expect, it } from 'vitest';
import { DeadlineExceededError, withDeadlineIfPending } from '../../lib/shared/deadline.js';

describe('a deadline only for what has to be waited for', () => {
  it('a value that is already there comes back as it is, not as a promise', () => {
    const loaded = { config: 'cached' };
    expect(withDeadlineIfPending('configuration', 10, loaded)).toBe(loaded);
  });

  it('a promise is waited for at most its time, then fails with a named deadline', async () => {
    expect(await withDeadlineIfPending('configuration', 1_000, Promise.resolve('read'))).toBe('read');
    const started = Date.now();
    const never = new Promise<string>(() => undefined);
    const failure = await Promise.resolve(withDeadlineIfPending('authentication', 50, never)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(DeadlineExceededError);
    expect(failure).toMatchObject({ reason: 'authentication_deadline' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
