import { describe, expect, it } from 'vitest';
import { parseJson } from '../../lib/shared/json.js';
import { jsonSyntaxError } from '../../lib/shared/json-syntax.js';

const VALUE = 'expected a value (a string in double quotes, a number, true, false, null, an object or an array)';

describe('where a JSON text goes wrong, in our words', () => {
  it.each([
    ['{"a": 1,}', 1, 9, 'expected a property name after ","; JSON allows no trailing comma'],
    ['{"a" 1}', 1, 6, 'expected ":" after a property name'],
    ['{\n  "a": "x"\n  "b": 2\n}', 3, 3, 'expected "," or "}" after a property value'],
    ['{"a": tru}', 1, 7, VALUE],
    ['', 1, 1, `${VALUE}, but the text ends`],
    ['[1,2', 1, 5, 'expected "," or "]" after an array element, but the text ends'],
    ['[1,]', 1, 4, 'expected a value after ","; JSON allows no trailing comma'],
    ["{'a':1}", 1, 2, 'expected a property name in double quotes'],
    ["['a']", 1, 2, 'strings must be in double quotes'],
    ['{"a":1} x', 1, 9, 'expected nothing after the value'],
    ['{"a":"line\nbreak"}', 1, 11, 'a string may not hold a line break or control character; write \\n for a new line'],
    ['{"a":"\\q"}', 1, 8, 'unknown escape in a string'],
    ['{"a":"\\u12"}', 1, 8, 'expected four hex digits after \\u'],
    ['{"a":"open', 1, 11, 'a string is not closed with ", but the text ends'],
    ['{"a": -}', 1, 7, 'expected a number'],
    ['\uFEFF{}', 1, 1, 'the text starts with a byte order mark; save it as UTF-8 without one'],
  ])('%j: line %i, column %i: %s', (text, line, column, problem) => {
    expect(parseJson(text).ok).toBe(false);
    expect(jsonSyntaxError(text)).toEqual({ line, column, problem });
  });

  it('finds nothing wrong in what JSON.parse reads', () => {
    for (const text of ['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "\\u00e9\\n"], "b": {}} ', '"x"', '0']) {
      expect(parseJson(text).ok).toBe(true);
      expect(jsonSyntaxError(text)).toBeUndefined();
    }
  });

  it('does not fall over on deeply nested text', () => {
    expect(jsonSyntaxError('['.repeat(600))).toMatchObject({ problem: 'nested too deeply' });
  });
});
