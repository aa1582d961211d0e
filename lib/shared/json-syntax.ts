/** Where a JSON text first goes wrong, in our words: line and column count from 1. */
export interface JsonSyntaxProblem {
  line: number;
  column: number;
  problem: string;
}

class Stop {
  constructor(
    readonly offset: number,
    readonly problem: string,
  ) {}
}

/**
 * The first syntax error of a text that JSON.parse refused. JSON.parse's own message is never
 * used: it may quote the text (a password, a webhook URL) and it gives no position for some
 * errors. This scanner only reads the grammar, and runs only after a failed parse.
 */
export function jsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  let i = 0;
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (problem: string): never => {
    throw new Stop(i, i >= text.length ? `${problem}, but the text ends` : problem);
  };
  const literal = (word: string) => {
    if (text.startsWith(word, i)) i += word.length;
    else fail('expected a value (a string in double quotes, a number, true, false, null, an object or an array)');
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      const c = text.charCodeAt(i);
      if (c < 0x20) fail('a string may not hold a line break or control character; write \\n for a new line');
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('expected four hex digits after \\u');
          i += 5;
          continue;
        }
        if (!'"\\/bfnrt'.includes(text[i] ?? '')) fail('unknown escape in a string');
      }
      i++;
    }
    if (i >= text.length) fail('a string is not closed with "');
    i++;
  };
  const number = () => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match) fail('expected a number');
    i += match![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 512) fail('nested too deeply');
    space();
    const c = text[i];
    if (c === '{') {
      i++;
      space();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        space();
        if (text[i] !== '"')
          fail(
            text[i] === '}'
              ? 'expected a property name after ","; JSON allows no trailing comma'
              : 'expected a property name in double quotes',
          );
        string();
        space();
        if (text[i] !== ':') fail('expected ":" after a property name');
        i++;
        value(depth + 1);
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail('expected "," or "}" after a property value');
      }
    }
    if (c === '[') {
      i++;
      space();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        space();
        if (text[i] === ']') fail('expected a value after ","; JSON allows no trailing comma');
        value(depth + 1);
        space();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail('expected "," or "]" after an array element');
      }
    }
    if (c === '"') string();
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === "'") fail('strings must be in double quotes');
    else fail('expected a value (a string in double quotes, a number, true, false, null, an object or an array)');
  };
  try {
    // A byte order mark is what some editors write first; JSON.parse refuses it as well.
    if (text.charCodeAt(0) === 0xfeff) fail('the text starts with a byte order mark; save it as UTF-8 without one');
    value(0);
    space();
    if (i < text.length) fail('expected nothing after the value');
    return undefined;
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    const before = text.slice(0, error.offset);
    const line = before.split('\n').length;
    const column = error.offset - (before.lastIndexOf('\n') + 1) + 1;
    return { line, column, problem: error.problem };
  }
}
