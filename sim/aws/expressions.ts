import { RESERVED_WORDS } from './reserved-words.js';

/**
 * DynamoDB's expression language, as much of it as a table stand-in needs to hold our adapters
 * to DynamoDB's rules: conditions (comparisons, BETWEEN, IN, AND/OR/NOT, attribute_exists,
 * attribute_not_exists, begins_with, contains, size), key conditions, and update expressions
 * (SET with `+`, `-`, if_not_exists and list_append; REMOVE; ADD; DELETE). A clause it does not
 * know, or an attribute named by one of DynamoDB's reserved words rather than a placeholder, is a
 * ValidationException, as DynamoDB answers, never a silent pass.
 */

export type AttributeValue = {
  S?: string;
  N?: string;
  B?: string;
  BOOL?: boolean;
  NULL?: boolean;
  M?: Record<string, AttributeValue>;
  L?: AttributeValue[];
  SS?: string[];
  NS?: string[];
  BS?: string[];
};
export type Item = Record<string, AttributeValue>;

export class ExpressionError extends Error {
  override name = 'ExpressionError';
}

type Token = { kind: 'name' | 'placeholder' | 'value' | 'number' | 'op' | 'word'; text: string };

const WORDS = new Set(['AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'SET', 'REMOVE', 'ADD', 'DELETE']);

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    const rest = text.slice(at);
    const space = /^\s+/.exec(rest);
    if (space) {
      at += space[0].length;
      continue;
    }
    const match =
      /^(<>|<=|>=|[=<>(),.[\]+-])/.exec(rest) ??
      /^#[A-Za-z0-9_]+/.exec(rest) ??
      /^:[A-Za-z0-9_]+/.exec(rest) ??
      /^[0-9]+/.exec(rest) ??
      /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    if (!match) throw new ExpressionError(`Invalid expression: unexpected "${rest.slice(0, 10)}"`);
    const word = match[0];
    const kind: Token['kind'] = word.startsWith('#')
      ? 'placeholder'
      : word.startsWith(':')
        ? 'value'
        : /^[0-9]/.test(word)
          ? 'number'
          : /^[A-Za-z_]/.test(word)
            ? WORDS.has(word.toUpperCase())
              ? 'word'
              : 'name'
            : 'op';
    tokens.push({ kind, text: kind === 'word' ? word.toUpperCase() : word });
    at += word.length;
  }
  return tokens;
}

export interface ExpressionInput {
  names?: Record<string, string> | undefined;
  values?: Record<string, AttributeValue> | undefined;
}

/** Which of a request's expressions is parsed: DynamoDB names it in its refusals. */
export type ExpressionField =
  | 'ConditionExpression'
  | 'KeyConditionExpression'
  | 'FilterExpression'
  | 'UpdateExpression'
  | 'ProjectionExpression';

type PathPart = string | number;
type Operand =
  | { kind: 'path'; path: PathPart[] }
  | { kind: 'value'; value: AttributeValue }
  | { kind: 'size'; path: PathPart[] }
  | { kind: 'if_not_exists'; path: PathPart[]; fallback: Operand }
  | { kind: 'list_append'; left: Operand; right: Operand }
  | { kind: 'arith'; op: '+' | '-'; left: Operand; right: Operand };

class Parser {
  private at = 0;
  readonly usedNames = new Set<string>();
  readonly usedValues = new Set<string>();

  constructor(
    private readonly tokens: Token[],
    private readonly input: ExpressionInput,
    private readonly field: ExpressionField,
  ) {}

  peek(offset = 0): Token | undefined {
    return this.tokens[this.at + offset];
  }
  done(): boolean {
    return this.at >= this.tokens.length;
  }
  next(): Token {
    const token = this.tokens[this.at++];
    if (!token) throw new ExpressionError('Invalid expression: unexpected end');
    return token;
  }
  expect(text: string): void {
    const token = this.next();
    if (token.text !== text) throw new ExpressionError(`Invalid expression: expected "${text}", got "${token.text}"`);
  }
  isOp(text: string): boolean {
    return this.peek()?.text === text;
  }

  path(): PathPart[] {
    const parts: PathPart[] = [this.name()];
    for (;;) {
      if (this.isOp('.')) {
        this.next();
        parts.push(this.name());
      } else if (this.isOp('[')) {
        this.next();
        const index = this.next();
        if (index.kind !== 'number') throw new ExpressionError('Invalid expression: list index');
        parts.push(Number(index.text));
        this.expect(']');
      } else return parts;
    }
  }

  name(): string {
    const token = this.next();
    if (token.kind === 'placeholder') {
      const name = this.input.names?.[token.text];
      if (name === undefined)
        throw new ExpressionError(`An expression attribute name used in the document path is not defined; attribute name: ${token.text}`);
      this.usedNames.add(token.text);
      return name;
    }
    if (token.kind === 'name') {
      // Every part of a document path, as DynamoDB checks them; a function's name is no attribute's.
      if (RESERVED_WORDS.has(token.text.toUpperCase())) {
        throw new ExpressionError(`Invalid ${this.field}: Attribute name is a reserved keyword; reserved keyword: ${token.text}`);
      }
      return token.text;
    }
    throw new ExpressionError(`Invalid expression: expected an attribute name, got "${token.text}"`);
  }

  value(): AttributeValue {
    const token = this.next();
    const value = this.input.values?.[token.text];
    if (value === undefined)
      throw new ExpressionError(`An expression attribute value used in expression is not defined; attribute value: ${token.text}`);
    this.usedValues.add(token.text);
    return value;
  }

  operand(): Operand {
    const token = this.peek();
    if (!token) throw new ExpressionError('Invalid expression: unexpected end');
    if (token.kind === 'value') return { kind: 'value', value: this.value() };
    if (token.kind === 'name' && this.peek(1)?.text === '(') {
      const fn = token.text;
      if (fn === 'size') {
        this.next();
        this.expect('(');
        const path = this.path();
        this.expect(')');
        return { kind: 'size', path };
      }
      if (fn === 'if_not_exists') {
        this.next();
        this.expect('(');
        const path = this.path();
        this.expect(',');
        const fallback = this.operand();
        this.expect(')');
        return { kind: 'if_not_exists', path, fallback };
      }
      if (fn === 'list_append') {
        this.next();
        this.expect('(');
        const left = this.operand();
        this.expect(',');
        const right = this.operand();
        this.expect(')');
        return { kind: 'list_append', left, right };
      }
    }
    return { kind: 'path', path: this.path() };
  }

  /** A SET clause's value: an operand, or two joined by `+` or `-`. */
  setValue(): Operand {
    const left = this.operand();
    if (this.isOp('+') || this.isOp('-')) {
      const op = this.next().text as '+' | '-';
      return { kind: 'arith', op, left, right: this.operand() };
    }
    return left;
  }
}

// ---- values -------------------------------------------------------------------------------

function resolve(item: Item | undefined, path: readonly PathPart[]): AttributeValue | undefined {
  let current: AttributeValue | undefined = item ? { M: item } : undefined;
  for (const part of path) {
    if (!current) return undefined;
    current = typeof part === 'number' ? current.L?.[part] : current.M?.[part];
  }
  return current;
}

function evaluate(item: Item | undefined, operand: Operand): AttributeValue | undefined {
  switch (operand.kind) {
    case 'value':
      return operand.value;
    case 'path':
      return resolve(item, operand.path);
    case 'size': {
      const value = resolve(item, operand.path);
      if (!value) return undefined;
      const size =
        value.S !== undefined
          ? Buffer.byteLength(value.S)
          : value.B !== undefined
            ? Buffer.from(value.B, 'base64').length
            : value.L
              ? value.L.length
              : value.M
                ? Object.keys(value.M).length
                : (value.SS ?? value.NS ?? value.BS)?.length;
      return size === undefined ? undefined : { N: String(size) };
    }
    case 'if_not_exists':
      return resolve(item, operand.path) ?? evaluate(item, operand.fallback);
    case 'list_append': {
      const left = evaluate(item, operand.left);
      const right = evaluate(item, operand.right);
      if (!left?.L || !right?.L) throw new ExpressionError('An operand in the update expression has an incorrect data type');
      return { L: [...left.L, ...right.L] };
    }
    case 'arith': {
      const left = evaluate(item, operand.left);
      const right = evaluate(item, operand.right);
      if (left?.N === undefined || right?.N === undefined) {
        throw new ExpressionError('An operand in the update expression has an incorrect data type');
      }
      const result = operand.op === '+' ? Number(left.N) + Number(right.N) : Number(left.N) - Number(right.N);
      return { N: String(result) };
    }
  }
}

/** -1, 0, 1, or undefined when DynamoDB would not compare the two (different types, or not scalars). */
function compare(a: AttributeValue | undefined, b: AttributeValue | undefined): number | undefined {
  if (!a || !b) return undefined;
  if (a.N !== undefined && b.N !== undefined) return Math.sign(Number(a.N) - Number(b.N));
  if (a.S !== undefined && b.S !== undefined) return Buffer.compare(Buffer.from(a.S), Buffer.from(b.S));
  if (a.B !== undefined && b.B !== undefined) return Buffer.compare(Buffer.from(a.B, 'base64'), Buffer.from(b.B, 'base64'));
  return undefined;
}

/** Whether two values are equal as DynamoDB compares them (sets regardless of order). */
export function sameValue(a: AttributeValue | undefined, b: AttributeValue | undefined): boolean {
  if (!a || !b) return false;
  const scalar = compare(a, b);
  if (scalar !== undefined) return scalar === 0;
  if (a.BOOL !== undefined || b.BOOL !== undefined) return a.BOOL === b.BOOL;
  if (a.NULL !== undefined || b.NULL !== undefined) return a.NULL === b.NULL;
  for (const set of ['SS', 'NS', 'BS'] as const) {
    const left = a[set];
    const right = b[set];
    if (left || right) {
      if (!left || !right || left.length !== right.length) return false;
      const norm = (values: string[]) => (set === 'NS' ? values.map((v) => String(Number(v))) : values).sort();
      return JSON.stringify(norm([...left])) === JSON.stringify(norm([...right]));
    }
  }
  if (a.L && b.L) return a.L.length === b.L.length && a.L.every((value, i) => sameValue(value, b.L?.[i]));
  if (a.M && b.M) {
    const keys = Object.keys(a.M);
    return keys.length === Object.keys(b.M).length && keys.every((key) => sameValue(a.M?.[key], b.M?.[key]));
  }
  return false;
}

// ---- conditions ---------------------------------------------------------------------------

type Condition = (item: Item | undefined) => boolean;

function parseCondition(p: Parser): Condition {
  let left = parseAnd(p);
  while (p.peek()?.text === 'OR') {
    p.next();
    const right = parseAnd(p);
    const l = left;
    left = (item) => l(item) || right(item);
  }
  return left;
}

function parseAnd(p: Parser): Condition {
  let left = parseNot(p);
  while (p.peek()?.text === 'AND') {
    p.next();
    const right = parseNot(p);
    const l = left;
    left = (item) => l(item) && right(item);
  }
  return left;
}

function parseNot(p: Parser): Condition {
  if (p.peek()?.text === 'NOT') {
    p.next();
    const inner = parseNot(p);
    return (item) => !inner(item);
  }
  return parsePrimary(p);
}

const COMPARATORS: Record<string, (order: number) => boolean> = {
  '=': (o) => o === 0,
  '<>': (o) => o !== 0,
  '<': (o) => o < 0,
  '<=': (o) => o <= 0,
  '>': (o) => o > 0,
  '>=': (o) => o >= 0,
};

function parsePrimary(p: Parser): Condition {
  const token = p.peek();
  if (!token) throw new ExpressionError('Invalid expression: unexpected end');
  if (token.text === '(') {
    p.next();
    const inner = parseCondition(p);
    p.expect(')');
    return inner;
  }
  if (token.kind === 'name' && p.peek(1)?.text === '(' && token.text !== 'size') {
    p.next();
    p.expect('(');
    switch (token.text) {
      case 'attribute_exists':
      case 'attribute_not_exists': {
        const path = p.path();
        p.expect(')');
        const exists = token.text === 'attribute_exists';
        return (item) => (resolve(item, path) !== undefined) === exists;
      }
      case 'begins_with': {
        const subject = p.operand();
        p.expect(',');
        const prefix = p.operand();
        p.expect(')');
        return (item) => {
          const a = evaluate(item, subject);
          const b = evaluate(item, prefix);
          return a?.S !== undefined && b?.S !== undefined && a.S.startsWith(b.S);
        };
      }
      case 'contains': {
        const subject = p.operand();
        p.expect(',');
        const part = p.operand();
        p.expect(')');
        return (item) => {
          const a = evaluate(item, subject);
          const b = evaluate(item, part);
          if (!a || !b) return false;
          if (a.S !== undefined && b.S !== undefined) return a.S.includes(b.S);
          const members = a.SS ?? a.NS ?? a.L?.map((v) => v.S ?? v.N ?? '');
          return members?.includes(b.S ?? b.N ?? '\u0000') ?? false;
        };
      }
      default:
        throw new ExpressionError(`Invalid function name; function: ${token.text}`);
    }
  }
  const left = p.operand();
  const op = p.next();
  if (op.text === 'BETWEEN') {
    const low = p.operand();
    if (p.next().text !== 'AND') throw new ExpressionError('Invalid expression: BETWEEN needs AND');
    const high = p.operand();
    return (item) => {
      const value = evaluate(item, left);
      const a = compare(value, evaluate(item, low));
      const b = compare(value, evaluate(item, high));
      return a !== undefined && b !== undefined && a >= 0 && b <= 0;
    };
  }
  if (op.text === 'IN') {
    p.expect('(');
    const options: Operand[] = [p.operand()];
    while (p.isOp(',')) {
      p.next();
      options.push(p.operand());
    }
    p.expect(')');
    return (item) => options.some((option) => sameValue(evaluate(item, left), evaluate(item, option)));
  }
  const comparator = COMPARATORS[op.text];
  if (!comparator) throw new ExpressionError(`Invalid expression: unexpected "${op.text}"`);
  const right = p.operand();
  if (op.text === '=' || op.text === '<>') {
    const wanted = op.text === '=';
    return (item) => {
      const a = evaluate(item, left);
      const b = evaluate(item, right);
      // DynamoDB: a missing attribute is never equal, and `<>` against one holds.
      if (!a || !b) return !wanted;
      return sameValue(a, b) === wanted;
    };
  }
  return (item) => {
    const order = compare(evaluate(item, left), evaluate(item, right));
    return order !== undefined && comparator(order);
  };
}

function parser(expression: string, input: ExpressionInput, field: ExpressionField): Parser {
  return new Parser(tokenize(expression), input, field);
}

/** A condition expression (a key condition or a filter too), ready to hold against an item (undefined: no item). */
export function conditionOf(
  expression: string,
  input: ExpressionInput,
  field: 'ConditionExpression' | 'KeyConditionExpression' | 'FilterExpression' = 'ConditionExpression',
): { holds: Condition; used: Parser } {
  const p = parser(expression, input, field);
  const holds = parseCondition(p);
  if (!p.done()) throw new ExpressionError(`Invalid expression: unexpected "${p.peek()?.text}"`);
  return { holds, used: p };
}

// ---- updates ------------------------------------------------------------------------------

type Action = (item: Item) => void;

function setAt(item: Item, path: readonly PathPart[], value: AttributeValue): void {
  const [first, ...rest] = path;
  if (typeof first !== 'string') throw new ExpressionError('Invalid document path');
  if (rest.length === 0) {
    item[first] = value;
    return;
  }
  const parent = resolve(item, path.slice(0, -1));
  const last = path[path.length - 1] as PathPart;
  if (typeof last === 'number') {
    if (!parent?.L) throw new ExpressionError('The document path provided in the update expression is invalid for update');
    parent.L[Math.min(last, parent.L.length)] = value;
  } else {
    if (!parent?.M) throw new ExpressionError('The document path provided in the update expression is invalid for update');
    parent.M[last] = value;
  }
}

function removeAt(item: Item, path: readonly PathPart[]): void {
  if (path.length === 1) {
    delete item[path[0] as string];
    return;
  }
  const parent = resolve(item, path.slice(0, -1));
  const last = path[path.length - 1] as PathPart;
  if (typeof last === 'number') parent?.L?.splice(last, 1);
  else if (parent?.M) delete parent.M[last];
}

/** An update expression as a list of actions on a copy of the item (DynamoDB applies all or none). */
export function updateOf(
  expression: string,
  input: ExpressionInput,
): { apply: (item: Item) => Item; used: Parser; touched: ReadonlySet<string> } {
  const p = parser(expression, input, 'UpdateExpression');
  const actions: Action[] = [];
  const touched = new Set<string>();
  const seen = new Set<string>();
  while (!p.done()) {
    const clause = p.next();
    if (clause.kind !== 'word' || seen.has(clause.text)) throw new ExpressionError(`Invalid UpdateExpression: unexpected "${clause.text}"`);
    seen.add(clause.text);
    do {
      if (p.isOp(',')) p.next();
      const path = p.path();
      touched.add(path[0] as string);
      if (clause.text === 'SET') {
        p.expect('=');
        const value = p.setValue();
        actions.push((item) => {
          const computed = evaluate(item, value);
          if (!computed) throw new ExpressionError('The provided expression refers to an attribute that does not exist in the item');
          setAt(item, path, structuredClone(computed));
        });
      } else if (clause.text === 'REMOVE') {
        actions.push((item) => removeAt(item, path));
      } else if (clause.text === 'ADD' || clause.text === 'DELETE') {
        const value = p.value();
        const add = clause.text === 'ADD';
        actions.push((item) => {
          const current = resolve(item, path);
          if (value.N !== undefined && add) {
            if (current && current.N === undefined)
              throw new ExpressionError('An operand in the update expression has an incorrect data type');
            setAt(item, path, { N: String(Number(current?.N ?? '0') + Number(value.N)) });
            return;
          }
          const set = (['SS', 'NS', 'BS'] as const).find((key) => value[key]);
          if (!set) throw new ExpressionError('Incorrect operand type for operator or function; operator: ADD');
          const members = new Set(current?.[set] ?? []);
          for (const member of value[set] ?? []) add ? members.add(member) : members.delete(member);
          if (members.size === 0) removeAt(item, path);
          else setAt(item, path, { [set]: [...members] });
        });
      } else {
        throw new ExpressionError(`Invalid UpdateExpression: unexpected "${clause.text}"`);
      }
    } while (p.isOp(','));
  }
  return {
    apply(item) {
      const copy = structuredClone(item);
      for (const action of actions) action(copy);
      return copy;
    },
    used: p,
    touched,
  };
}

/** Every name and value placeholder given must be used, as DynamoDB insists. */
export function checkAllUsed(input: ExpressionInput, parsers: readonly Parser[]): void {
  for (const name of Object.keys(input.names ?? {})) {
    if (!parsers.some((p) => p.usedNames.has(name))) {
      throw new ExpressionError(`Value provided in ExpressionAttributeNames unused in expressions: keys: {${name}}`);
    }
  }
  for (const value of Object.keys(input.values ?? {})) {
    if (!parsers.some((p) => p.usedValues.has(value))) {
      throw new ExpressionError(`Value provided in ExpressionAttributeValues unused in expressions: keys: {${value}}`);
    }
  }
}

/** Only the attributes a projection expression names (top-level names; nested paths keep their top attribute). */
export function project(
  item: Item,
  expression: string | undefined,
  names: Record<string, string> | undefined,
): { item: Item; used: Parser } | undefined {
  if (!expression) return undefined;
  const p = parser(expression, { names }, 'ProjectionExpression');
  const out: Item = {};
  do {
    if (p.isOp(',')) p.next();
    const path = p.path();
    const top = path[0] as string;
    if (item[top] !== undefined) out[top] = item[top];
  } while (p.isOp(','));
  return { item: out, used: p };
}
