import { describe, expect, it } from 'vitest';
import { unexpectedErrorMessage } from '../../scripts/unexpected.js';

describe('what an operator command says about an error it did not expect', () => {
  it('its kind and, for a system error, its code; never its message', () => {
    let syntax: unknown;
    try {
      JSON.parse('{"password": hunter2-pw}');
    } catch (error) {
      syntax = error;
    }
    expect(unexpectedErrorMessage('npm run config', syntax)).toBe(
      'npm run config failed unexpectedly (SyntaxError). Its details are not shown: they may contain secrets.',
    );
    const system = Object.assign(new Error('connect to https://hooks.example.com/secret-path failed'), { code: 'ECONNRESET' });
    expect(unexpectedErrorMessage('npm run send', system)).toContain('(Error ECONNRESET)');
  });

  it('a name or code that is not a plain word, or a thrown non-error, is not repeated', () => {
    const named = Object.assign(new Error('x'), { name: 'pw hunter2 leaked', code: 'secret value with spaces' });
    expect(unexpectedErrorMessage('npm run send', named)).toContain('(error)');
    for (const thrown of ['hunter2', 42, null, undefined, { code: 'EPIPE' }]) {
      expect(unexpectedErrorMessage('npm run send', thrown)).not.toContain('hunter2');
    }
    expect(unexpectedErrorMessage('npm run send', { code: 'EPIPE' })).toContain('(error EPIPE)');
  });
});
