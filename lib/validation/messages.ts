import { config } from 'zod/mini';

/** The part of a zod issue our messages read; `input` (the value) is never read: it may be a secret. */
interface Issue {
  code: string;
  expected?: string;
  input?: unknown;
  origin?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  exact?: boolean;
  format?: string;
  values?: readonly unknown[];
}

const KINDS: Readonly<Record<string, string>> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  record: 'an object',
};

const UNITS: Readonly<Record<string, [string, string]>> = {
  string: ['character', 'characters'],
  array: ['entry', 'entries'],
};

function size(issue: Issue, bound: number | bigint | undefined, more: boolean): string {
  const n = Number(bound);
  const unit = issue.origin ? UNITS[issue.origin] : undefined;
  if (unit) {
    if (!more && n === 1 && !issue.exact) return 'must not be empty';
    const words = `${n} ${n === 1 ? unit[0] : unit[1]}`;
    return issue.exact ? `must have exactly ${words}` : `must have ${more ? 'at most' : 'at least'} ${words}`;
  }
  const strict = issue.inclusive === false;
  if (more) return strict ? `must be less than ${n}` : `must be at most ${n}`;
  return strict ? `must be more than ${n}` : `must be at least ${n}`;
}

/**
 * Every validation problem in our words: what is expected at that path, never the value
 * received (it may be a password or a webhook URL), and no wording of the validation library.
 */
export function problemMessage(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${KINDS[issue.expected ?? ''] ?? issue.expected ?? 'something else'}`;
    case 'invalid_value': {
      const values = (issue.values ?? []).map((v) => JSON.stringify(v));
      return values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(', ')}`;
    }
    case 'too_small':
      return size(issue, issue.minimum, false);
    case 'too_big':
      return size(issue, issue.maximum, true);
    case 'invalid_format':
      return issue.format === 'url' ? 'must be a URL' : `must be a valid ${issue.format ?? 'value'}`;
    case 'not_multiple_of':
      return 'is not an allowed step';
    case 'invalid_union':
      return 'matches none of the allowed forms';
    case 'invalid_key':
      return 'has a key that is not allowed';
    case 'invalid_element':
      return 'has an entry that is not allowed';
    case 'unrecognized_keys':
      return 'has unknown keys';
    default:
      return 'is not valid';
  }
}

// zod/mini carries no messages of its own; a check that gives its own message keeps it.
config({ localeError: (issue) => problemMessage(issue as unknown as Issue) });
