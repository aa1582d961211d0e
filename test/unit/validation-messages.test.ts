import { describe, expect, it } from 'vitest';
import { problemMessage } from '../../lib/validation/messages.js';

describe('validation problems in our words', () => {
  it.each([
    [{ code: 'invalid_type', expected: 'object', input: undefined }, 'is required'],
    [{ code: 'invalid_type', expected: 'string', input: 42 }, 'must be text'],
    [{ code: 'invalid_type', expected: 'boolean', input: 'yes' }, 'must be true or false'],
    [{ code: 'invalid_type', expected: 'array', input: {} }, 'must be a list'],
    [{ code: 'invalid_type', expected: 'bigint', input: 1 }, 'must be bigint'],
    [{ code: 'invalid_value', values: ['none', 'basic'] }, 'must be one of "none", "basic"'],
    [{ code: 'invalid_value', values: [2] }, 'must be 2'],
    [{ code: 'too_small', origin: 'string', minimum: 1, inclusive: true }, 'must not be empty'],
    [{ code: 'too_small', origin: 'string', minimum: 32, inclusive: true }, 'must have at least 32 characters'],
    [{ code: 'too_small', origin: 'array', minimum: 1, exact: true }, 'must have exactly 1 entry'],
    [{ code: 'too_big', origin: 'string', maximum: 200, inclusive: true }, 'must have at most 200 characters'],
    [{ code: 'too_small', origin: 'number', minimum: 60, inclusive: true }, 'must be at least 60'],
    [{ code: 'too_small', origin: 'number', minimum: 0, inclusive: false }, 'must be more than 0'],
    [{ code: 'too_big', origin: 'number', maximum: 900, inclusive: true }, 'must be at most 900'],
    [{ code: 'too_big', origin: 'number', maximum: 10, inclusive: false }, 'must be less than 10'],
    [{ code: 'invalid_format', format: 'url' }, 'must be a URL'],
    [{ code: 'invalid_format', format: 'email' }, 'must be a valid email'],
    [{ code: 'not_multiple_of' }, 'is not an allowed step'],
    [{ code: 'invalid_union' }, 'matches none of the allowed forms'],
    [{ code: 'invalid_key' }, 'has a key that is not allowed'],
    [{ code: 'invalid_element' }, 'has an entry that is not allowed'],
    [{ code: 'unrecognized_keys' }, 'has unknown keys'],
    [{ code: 'custom' }, 'is not valid'],
  ])('%j reads "%s"', (issue, message) => {
    expect(problemMessage(issue)).toBe(message);
  });

  it('never repeats the value it was given', () => {
    const secret = 'hunter2-very-secret';
    for (const code of ['invalid_type', 'invalid_value', 'too_small', 'too_big', 'invalid_format', 'custom']) {
      expect(
        problemMessage({ code, input: secret, expected: 'number', values: ['a'], origin: 'string', minimum: 1, maximum: 2, format: 'url' }),
      ).not.toContain(secret);
    }
  });
});
