// `npm run apikey -- [--base-url URL] [--account A] [--cost-center C] [--list] [--reveal]`
// Builds a platform API key with the spec 4.4 procedure, as the rotation function does.
// Credentials: COST_API_USERNAME / COST_API_PASSWORD, else a prompt; never arguments.
import { parseArgs } from 'node:util';
import { buildApiKey, toApiKeySecret } from '../lib/api-key/procedure.js';
import { describeAccount, SelectionError, selectAccount } from '../lib/api-key/select.js';
import { maskApiKey } from '../lib/cost-api/api-key.js';
import { DEFAULT_COST_API_BASE_URL, isAllowedBaseUrl } from '../lib/cost-api/base-url.js';
import { type CostApiClient, type Credentials, createCostApiClient } from '../lib/cost-api/client.js';
import { CostApiError } from '../lib/cost-api/errors.js';
import type { PayerAccount } from '../lib/cost-api/schema.js';
import { createLogger } from '../lib/log/logger.js';
import { parseJson } from '../lib/shared/json.js';
import { promptCredentials } from './prompt.js';
import { guardUnexpectedErrors, unexpectedErrorMessage } from './unexpected.js';

const USAGE = `usage: npm run apikey -- [--base-url URL] [--account A] [--cost-center C] [--list] [--reveal]

  --list          print the payer accounts and cost centers you may choose
  --account A     accountKey, cloud account id or account name
  --cost-center C cost center id or name (omit for all cost centers)
  --reveal        print the full secret value (JSON) instead of a masked summary
  --base-url URL  platform URL (default: COST_API_BASE_URL or ${DEFAULT_COST_API_BASE_URL})

Credentials come from COST_API_USERNAME and COST_API_PASSWORD, or are asked for.`;

const CLOUD_TYPES: Record<number, string> = { 0: 'AWS', 1: 'Azure', 2: 'GCP' };
/** Listing cost centers costs one call per account; the platform rate-limits per key and endpoint. */
const MAX_ACCOUNTS_WITH_COST_CENTERS = 10;

class UsageError extends Error {
  override name = 'UsageError';
}

function readArguments() {
  try {
    return parseArgs({
      options: {
        'base-url': { type: 'string' },
        account: { type: 'string' },
        'cost-center': { type: 'string', default: '' },
        list: { type: 'boolean', default: false },
        reveal: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    const message = (error as Error).message;
    if (/'-*(?:u|p|user|username|pass|password|credentials?)'/i.test(message)) {
      throw new UsageError(
        'Credentials are never taken from arguments (they end up in shell history and process lists). Set COST_API_USERNAME and COST_API_PASSWORD, or answer the prompt.',
      );
    }
    throw new UsageError(message);
  }
}

async function credentials(): Promise<{ credentials: Credentials; source: string }> {
  const username = process.env['COST_API_USERNAME']?.trim();
  const password = process.env['COST_API_PASSWORD'];
  if (username && password) return { credentials: { username, password }, source: 'COST_API_USERNAME/COST_API_PASSWORD' };
  const answered = await promptCredentials();
  if (!answered.username || !answered.password) throw new UsageError('A username and a password are needed.');
  return { credentials: answered, source: 'the prompt' };
}

const cloudType = (id: number | undefined) => (id === undefined ? '' : (CLOUD_TYPES[id] ?? `type ${id}`));

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) => `  ${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ')}`.trimEnd()).join('\n');
}

async function list(client: CostApiClient, login: Credentials, onlyAccount: string | undefined): Promise<void> {
  const token = await client.generateToken(login);
  const accounts = await client.listPayerAccounts({ apikey: token.apikey, authorization: token.authorization });
  console.log('Payer accounts (--account takes the accountKey, the cloud account id or the name):');
  console.log(
    table([
      ['ACCOUNT KEY', 'CLOUD ACCOUNT ID', 'CLOUD', 'NAME'],
      ...accounts.map((a) => [a.accountKey, a.accountId, cloudType(a.cloudTypeId), a.accountName]),
    ]),
  );
  let chosen: PayerAccount[] = accounts;
  if (onlyAccount) {
    chosen = [selectAccount(accounts, onlyAccount)];
  } else if (accounts.length > MAX_ACCOUNTS_WITH_COST_CENTERS) {
    console.log(`\n${accounts.length} accounts: add --account to list the cost centers of one of them.`);
    return;
  }
  for (const account of chosen) {
    console.log(`\nCost centers of ${describeAccount(account)} (--cost-center takes the id or the name; omit it for all):`);
    try {
      const centers = await client.listCostCenters({
        apikey: `${token.userKey}:${account.accountKey}:`,
        authorization: token.authorization,
      });
      console.log(centers.length === 0 ? '  (none)' : table([['ID', 'NAME', 'CODE'], ...centers.map((c) => [c.id, c.name, c.code])]));
    } catch (error) {
      if (!(error instanceof CostApiError)) throw error;
      console.log(`  (cannot list them: ${error.message})`);
    }
  }
}

async function main(): Promise<void> {
  const args = readArguments();
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const baseUrl = args['base-url'] ?? (process.env['COST_API_BASE_URL'] || DEFAULT_COST_API_BASE_URL);
  if (!isAllowedBaseUrl(baseUrl)) throw new UsageError('--base-url must be an https URL (plain http only for this machine).');
  if (!args.list && !args.account) throw new UsageError('--account is required to build a key; --list shows the choices.');

  const login = await credentials();
  const logger = createLogger({
    level: 'warn',
    sink: (line) => {
      // The logger writes JSON; should a line ever not be, it is not repeated (it may quote a request).
      const parsed = parseJson(line);
      if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) {
        process.stderr.write('note: the platform client warned, in a form that could not be read\n');
        return;
      }
      const record = parsed.value as Record<string, unknown>;
      process.stderr.write(
        `note: ${String(record['message'])} (${String(record['call'])}: ${String(record['reason'])}, waiting ${String(record['waitMs'])} ms)\n`,
      );
    },
  });
  const client = createCostApiClient({ baseUrl, logger });

  if (args.list) return list(client, login.credentials, args.account);

  const selection = { account: args.account ?? '', costCenter: args['cost-center'] };
  const result = await buildApiKey(client, { credentials: login.credentials, credentialsSource: login.source, ...selection });
  if (args.reveal) {
    console.log(JSON.stringify(toApiKeySecret(selection, result), null, 2));
    return;
  }
  console.log(
    table([
      ['account', describeAccount(result.account)],
      ['cost center', result.costCenter ? `"${result.costCenter.name}" (id ${result.costCenter.id})` : 'all'],
      ['apikey', maskApiKey(result.apikey)],
      ['authorization', `(hidden, ${result.authorization.length} characters)`],
      ['expires at', result.expiresAt?.toISOString() ?? 'unknown (the token has no readable exp claim)'],
    ]),
  );
  console.log('\n--reveal prints the full value, in the format of the API-key secret.');
}

guardUnexpectedErrors('npm run apikey');
try {
  await main();
} catch (error) {
  if (error instanceof UsageError) {
    console.error(`${error.message}\n\n${USAGE}`);
    process.exitCode = 2;
  } else if (error instanceof CostApiError || error instanceof SelectionError) {
    console.error(error.message);
    process.exitCode = 1;
  } else {
    // Unknown errors may carry request details; say only what kind of error it was.
    console.error(unexpectedErrorMessage('npm run apikey', error));
    process.exitCode = 1;
  }
}
