import { describe, expect, it } from 'vitest';
import { ConfigUnavailableError } from '../../lib/config/errors.js';
import { fileConfigSource } from '../../lib/config/source.js';
import { errorReason, ReasonedError } from '../../lib/shared/errors.js';
import { isTimeout, TimeoutError } from '../../lib/transport/node-request.js';

describe('our errors', () => {
  it('keep the error they wrap as their cause, and are told apart by class', async () => {
    const failure = await fileConfigSource('/no/such/relay.json')().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigUnavailableError);
    expect(failure).toBeInstanceOf(ReasonedError);
    expect((failure as Error).cause).toMatchObject({ code: 'ENOENT' });
    expect(errorReason(failure)).toBe('file_ENOENT');
    // The message stays ours: the path is in the cause, not in what is logged.
    expect((failure as Error).message).not.toContain('/no/such');
  });

  it('a timeout is our timer or an aborted signal, and nothing else of that name', () => {
    expect(isTimeout(new TimeoutError('No answer within 5 ms'))).toBe(true);
    expect(isTimeout(AbortSignal.abort().reason)).toBe(true);
    expect(isTimeout(new DOMException('late', 'TimeoutError'))).toBe(true);
    expect(isTimeout(Object.assign(new Error('pretend'), { name: 'TimeoutError' }))).toBe(false);
    expect(isTimeout(new Error('ECONNRESET'))).toBe(false);
  });
});
