// Which configuration `npm start` uses, and its check before the server listens. Without the
// check a typo, a missing file or a forgotten `file:` shows only at the first request, as an
// error code without the file or the path that is wrong.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ConfigInvalidError } from '../lib/config/errors.js';
import { parseRelayConfig } from '../lib/config/load.js';
import { configSourceFor } from '../lib/config/store.js';
import { createLogger } from '../lib/log/logger.js';
import { errorReason } from '../lib/shared/errors.js';

export interface ConfigChoice {
  /** The value RELAY_CONFIG_SECRET_ID gets, as the handler reads it. */
  secretId: string;
  /** What each problem line starts with: the file as the user named it, or the secret. */
  label: string;
  /** The `configuration:` line printed once the server listens. */
  description: string;
}

/** RELAY_CONFIG_SECRET_ID first, then relay.config.json in the working directory, then the embedded default. */
export async function chooseConfiguration(env: NodeJS.ProcessEnv, embeddedDefault: () => object): Promise<ConfigChoice> {
  const fromEnv = env['RELAY_CONFIG_SECRET_ID'];
  if (fromEnv) {
    const description = `RELAY_CONFIG_SECRET_ID=${fromEnv}`;
    if (fromEnv.startsWith('file:')) return { secretId: fromEnv, label: fromEnv.slice('file:'.length), description };
    return { secretId: fromEnv, label: `secret ${fromEnv}`, description };
  }
  const local = resolve('relay.config.json');
  if (existsSync(local)) return { secretId: `file:${local}`, label: 'relay.config.json', description: 'relay.config.json' };
  const dir = await mkdtemp(join(tmpdir(), 'cost-alert-relay-'));
  const file = join(dir, 'relay.config.json');
  await writeFile(file, JSON.stringify(embeddedDefault(), null, 2));
  return {
    secretId: `file:${file}`,
    label: 'embedded default configuration',
    description: 'embedded default (no authentication, messages printed here instead of posted)',
  };
}

/** A value Secrets Manager would take as a name, but that a person most likely meant as a file. */
export const looksLikePath = (secretId: string): boolean => secretId.includes('/') || secretId.endsWith('.json');

/**
 * Every problem that would stop the relay from using the configuration, one line each,
 * `<file or secret>: <path>: <problem>`; empty when it is usable. Values never appear, since
 * any of them may be a password or a webhook URL.
 */
export async function configurationProblems(choice: ConfigChoice): Promise<string[]> {
  const read = await readDocument(choice);
  if ('problems' in read) return read.problems;
  return documentProblems(choice.label, read.text);
}

async function readDocument(choice: ConfigChoice): Promise<{ text: string } | { problems: string[] }> {
  const { secretId, label } = choice;
  if (secretId.startsWith('file:')) {
    const path = secretId.slice('file:'.length);
    try {
      return { text: await readFile(path, 'utf8') };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      const where = resolve(path) === path ? path : `${resolve(path)}, relative to ${process.cwd()}`;
      const what = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory, not a file' : `cannot be read (${code})`;
      return { problems: [`${label}: ${what} (${where})`] };
    }
  }
  const forgottenFile = `for a local file write RELAY_CONFIG_SECRET_ID=file:${secretId}`;
  // A secret name may contain `/` (prod/relay/config), so only an existing file settles it
  // without asking AWS.
  if (looksLikePath(secretId) && existsSync(secretId)) {
    return { problems: [`RELAY_CONFIG_SECRET_ID=${secretId} names a file, but without "file:" it is read as a Secrets Manager secret id; ${forgottenFile}`] };
  }
  try {
    // The relay's own reader, so the check reads exactly what the first request would.
    const source = configSourceFor(secretId, createLogger({ sink: () => {} }), false);
    return { text: (await source()).current };
  } catch (error) {
    const reason = errorReason(error);
    const hint = looksLikePath(secretId)
      ? `; it looks like a file path: ${forgottenFile}`
      : reason === 'RegionMissingError'
        ? '; set AWS_REGION (and AWS credentials) to read a secret'
        : '';
    return { problems: [`${label}: cannot be read from Secrets Manager (${reason})${hint}`] };
  }
}

/** Syntax errors with line and column, then every schema problem by its path. */
export function documentProblems(label: string, text: string): string[] {
  const syntax = jsonSyntaxProblem(text);
  if (syntax) return [`${label}: ${syntax}`];
  try {
    parseRelayConfig(text);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    return error.problems.map((p) => `${label}: ${p.path}: ${p.problem}`);
  }
}

class SyntaxProblem {
  constructor(
    readonly at: number,
    readonly reason: string,
  ) {}
}

/**
 * `line 3, column 5: not valid JSON (expected ',' or '}' after a property value)`, or
 * undefined for valid JSON. The reason is our own: V8's message quotes the text around the
 * error ("Unexpected token 's', "…s3cret…" is not valid JSON"), which may be a password, and
 * names no position for some errors.
 */
export function jsonSyntaxProblem(text: string): string | undefined {
  try {
    JSON.parse(text);
    return undefined;
  } catch {
    // Located below.
  }
  if (text.trim() === '') return 'is empty, not JSON';
  if (text.startsWith('\uFEFF')) return 'line 1, column 1: not valid JSON (the file starts with a byte order mark; save it as UTF-8 without one)';
  const problem = locateSyntaxProblem(text) ?? new SyntaxProblem(text.length, 'not JSON');
  const before = text.slice(0, problem.at).split('\n');
  return `line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}: not valid JSON (${problem.reason})`;
}

/** A JSON reader that only finds where the first mistake is and says what it expected there. */
function locateSyntaxProblem(text: string): SyntaxProblem | undefined {
  let i = 0;
  const fail = (reason: string): never => {
    throw new SyntaxProblem(i, reason);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const string = () => {
    i++;
    while (i < text.length) {
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        const escaped = text[i + 1];
        if (escaped === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) i += 2;
        else fail('a backslash in a string starts no valid escape');
        continue;
      }
      if (c < ' ') fail('a line break or control character inside a string; is a closing quote missing?');
      i++;
    }
    fail('a string is not closed');
  };
  const value = (): void => {
    space();
    const c = text[i];
    if (c === undefined) fail('the text ends where a value should be');
    if (c === '{') {
      i++;
      space();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        space();
        if (text[i] !== '"') fail("expected a property name in double quotes (no ',' after the last property)");
        string();
        space();
        if (text[i] !== ':') fail("expected ':' after a property name");
        i++;
        value();
        space();
        if (text[i] === '}') {
          i++;
          return;
        }
        if (text[i] !== ',') fail("expected ',' or '}' after a property value");
        i++;
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
        value();
        space();
        if (text[i] === ']') {
          i++;
          return;
        }
        if (text[i] !== ',') fail("expected ',' or ']' after an element");
        i++;
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const literal = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!literal) fail('expected a value: a string in double quotes, a number, true, false, null, an object or an array');
    i += literal![0].length;
  };
  try {
    value();
    space();
    if (i < text.length) fail('more text after the end of the JSON value');
    return undefined;
  } catch (error) {
    if (error instanceof SyntaxProblem) return error;
    throw error;
  }
}
