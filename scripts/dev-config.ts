// Which configuration `npm start` uses, and its check before the server listens. Without the
// check a typo, a missing file or a forgotten `file:` shows only at the first request, as an
// error code without the file or the path that is wrong.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
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
  /** The file written for the embedded default, removed when `npm start` ends. */
  temporaryFile?: string;
}

/** RELAY_CONFIG_SECRET_ID first, then relay.config.json in the working directory, then the embedded default. */
export async function chooseConfiguration(env: NodeJS.ProcessEnv, embeddedDefault: () => object, port: number): Promise<ConfigChoice> {
  const fromEnv = env['RELAY_CONFIG_SECRET_ID'];
  if (fromEnv) {
    const description = `RELAY_CONFIG_SECRET_ID=${fromEnv}`;
    if (fromEnv.startsWith('file:')) return { secretId: fromEnv, label: fromEnv.slice('file:'.length), description };
    return { secretId: fromEnv, label: `secret ${fromEnv}`, description };
  }
  const local = resolve('relay.config.json');
  if (existsSync(local)) return { secretId: `file:${local}`, label: 'relay.config.json', description: 'relay.config.json' };
  // The name older docs gave `config pull`'s output: one character off, and easily taken for this one.
  if (existsSync(resolve('relay-config.json'))) {
    console.error('npm start reads relay.config.json (with a dot); relay-config.json is here but not read. Rename it to use it.');
  }
  // One file per port, written anew at each start: an npm start that was killed before it could
  // remove it leaves one file that the next start on that port takes over, never a pile of them.
  const file = join(tmpdir(), `cost-alert-relay-embedded-${port}.json`);
  await writeFile(file, JSON.stringify(embeddedDefault(), null, 2), { mode: 0o600 });
  return {
    secretId: `file:${file}`,
    label: 'embedded default configuration',
    description: 'embedded default (no authentication, messages printed here instead of posted)',
    temporaryFile: file,
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
    return {
      problems: [
        `RELAY_CONFIG_SECRET_ID=${secretId} names a file, but without "file:" it is read as a Secrets Manager secret id; ${forgottenFile}`,
      ],
    };
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

/**
 * Every problem by its path, syntax errors with line and column: the relay's own reader, so
 * the check says what the relay would say (lib/config/load.ts).
 */
export function documentProblems(label: string, text: string): string[] {
  if (text.trim() === '') return [`${label}: is empty, not JSON`];
  try {
    parseRelayConfig(text);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    return error.problems.map((p) => `${label}: ${p.path}: ${p.problem}`);
  }
}
