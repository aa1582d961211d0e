// `npm run config -- validate|push|pull`: check a relay configuration before it is live, write it
// as the secret's new version, or start from what is live. Values are never printed except by
// `pull`, whose whole point is to give the operator the configuration.
import { randomUUID } from 'node:crypto';
import { type FileHandle, open, readFile, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { authWeakenings } from '../lib/config/auth-weakening.js';
import { configChanges } from '../lib/config/diff.js';
import { ConfigInvalidError } from '../lib/config/errors.js';
import { parseRelayConfig } from '../lib/config/load.js';
import type { RelayConfig } from '../lib/config/schema.js';
import { type WebhookMessage, webhookMessageSchema } from '../lib/message/schema.js';
import { destinationType } from '../lib/notify/kinds.js';
import { ownerAccountIdOf } from '../lib/owners/account-id.js';
import { ambiguousEntries, explainRoutes, routeFacts, routesByCostCenter } from '../lib/routing/route.js';
import { parseJson } from '../lib/shared/json.js';
import { describeIssues } from '../lib/shared/zod-issues.js';
import { ownersFromFile, ownersFromStack } from './owners-source.js';
import { costCenterLabel, lastRunText, recordAge } from './owners-text.js';
import { awsClientOptions, awsErrorMessage, notJsonMessage, SecretContentError, stackOutputs, UsageError } from './stack.js';
import { guardUnexpectedErrors, unexpectedErrorMessage } from './unexpected.js';

const USAGE = `usage:
  npm run config -- validate <file>
      Checks a relay configuration file; exit 0 when valid, 1 with each problem's path.
  npm run config -- push <file> (--secret-id ID | --stack NAME) [--yes] [--allow-weaker-auth] [--region REGION]
      Validates the file, shows which paths change (never their values), asks, and writes it as
      the secret's new current version. An invalid file changes nothing. A file that weakens
      authentication (method to none, or from sso to basic; a custom header no longer required;
      SSO tokens no longer checked for an audience) is said so, and written only with
      --allow-weaker-auth, with or without --yes. New passwords and header values are not weaker.
  npm run config -- pull (--secret-id ID | --stack NAME) [--output FILE] [--region REGION]
      Prints the live configuration (or writes it to FILE, readable only by you) to edit and push.
      A live secret that is not JSON is not printed: --output FILE writes it as it is, to mend (exit 1).

  npm run config -- explain <file> <delivery.json> [--owners FILE | --stack NAME] [--region REGION]
      Says which destinations the delivery would reach under the configuration in <file>, and which
      route (or default) sends it to each, without posting anything. Cost-center routes need the
      account's cost centers: from an owners file, or the deployed stack's owner directory (then
      also how old the account's record is and how directory-sync's last run ended).

--stack NAME reads the secret's ARN from the stack's RelayConfigSecretArn output (explain: the
stack's owner directory instead).
Exit codes: 0 done, 1 invalid configuration or refused, 2 usage mistake or AWS unreachable.`;

class InvalidFileError extends Error {
  override name = 'InvalidFileError';
}

function parse() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        'secret-id': { type: 'string' },
        stack: { type: 'string' },
        region: { type: 'string' },
        output: { type: 'string' },
        yes: { type: 'boolean', short: 'y' },
        'allow-weaker-auth': { type: 'boolean' },
        owners: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function readConfigFile(
  file: string | undefined,
  command: 'validate' | 'push' | 'explain',
): Promise<{ text: string; json: unknown; config: RelayConfig }> {
  if (!file) {
    const example = command === 'explain' ? 'explain relay.config.json events/anomaly-alert.json' : `${command} relay.config.json`;
    throw new UsageError(`Which configuration file? For example: npm run config -- ${example}`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `No such file: ${file}` : `Cannot read ${file}: ${code ?? 'unknown error'}`);
  }
  // The diff compares the file as written, before the schema's defaults.
  const json = parseJson(text);
  try {
    return { text, json: json.ok ? json.value : undefined, config: parseRelayConfig(text) };
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    const lines = error.problems.map((p) => `  ${p.path}: ${p.problem}`);
    throw new InvalidFileError(`${file} is not a valid relay configuration:\n${lines.join('\n')}`);
  }
}

function describe(config: RelayConfig): string {
  const destinations = Object.keys(config.destinations).length;
  const routes = config.routes?.length ?? 0;
  const headers = config.auth.headers?.length ?? 0;
  return `authentication ${config.auth.method}${headers ? ` + ${headers} header(s)` : ''}, ${destinations} destination(s), ${routes} route(s)`;
}

async function secretIdFrom(values: ReturnType<typeof parse>['values']): Promise<string> {
  const given = values['secret-id'];
  if (given && values.stack) throw new UsageError('Give --secret-id or --stack, not both.');
  if (given) return given;
  if (values.stack) {
    const arn = (await stackOutputs(values.stack, values.region))['RelayConfigSecretArn'];
    if (!arn) throw new UsageError(`The stack ${values.stack} has no RelayConfigSecretArn output; is it a Cost Alert Relay stack?`);
    return arn;
  }
  throw new UsageError('Which secret? Give --secret-id ID or --stack NAME.');
}

async function readLive(client: SecretsManagerClient, secretId: string): Promise<string | undefined> {
  try {
    return (await client.send(new GetSecretValueCommand({ SecretId: secretId }))).SecretString;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'ResourceNotFoundException')
      throw new UsageError(`No secret ${secretId} (or it has no current version). Deploy the stack first.`);
    throw new UsageError(`Could not read ${secretId}: ${awsErrorMessage(error)}`);
  }
}

async function confirm(question: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

async function push(file: string | undefined, values: ReturnType<typeof parse>['values']): Promise<number> {
  const { text, json, config } = await readConfigFile(file, 'push');
  const secretId = await secretIdFrom(values);
  const client = new SecretsManagerClient(awsClientOptions(values.region));
  try {
    const live = await readLive(client, secretId);
    const before = live === undefined ? undefined : parseJson(live);
    const liveJson = before?.ok ? before.value : undefined;
    const changes = configChanges(liveJson, json);
    if (changes.length === 0) {
      console.log(`${file} is what ${secretId} already holds; nothing to write.`);
      return 0;
    }
    console.log(`${file} is valid: ${describe(config)}.`);
    if (!before?.ok)
      console.log(`The live value of ${secretId} is not valid JSON (the relay cannot use it): it is replaced as a whole, and not shown.`);
    console.log(`Changes to ${secretId} (paths only; values are not shown):`);
    for (const c of changes) console.log(`  ${c.change === 'added' ? '+' : c.change === 'removed' ? '-' : '~'} ${c.path}`);
    const weakenings = authWeakenings(liveJson, config.auth);
    if (weakenings.length > 0) {
      console.log('This weakens authentication:');
      for (const w of weakenings) console.log(`  ! ${w.says}`);
      if (!values['allow-weaker-auth']) {
        console.error(
          'Nothing written: add --allow-weaker-auth to write a configuration that weakens authentication (--yes alone does not).',
        );
        return 1;
      }
    }
    if (!values.yes && !(await confirm('Write this as the new current version? [y/N] '))) {
      console.error(
        process.stdin.isTTY ? 'Nothing written.' : 'Nothing written: add --yes to write without asking (no terminal to ask in).',
      );
      return 1;
    }
    try {
      await client.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: text }));
    } catch (error) {
      throw new UsageError(`Could not write ${secretId}: ${awsErrorMessage(error)} Nothing was changed.`);
    }
    console.log('Written. The relay uses it within its configuration TTL (RELAY_CONFIG_TTL_SECONDS, 300 s by default);');
    console.log(
      'changed Basic or header credentials stay accepted for the grace period (docs/operations.md, "Changing credentials safely").',
    );
    return 0;
  } finally {
    client.destroy();
  }
}

/**
 * Writes `text` to `file`, readable and writable by its owner only, whatever `file` was before:
 * a new 0600 file beside it takes its place by rename, so the text is never in a file others can
 * read (writeFile's mode would apply only when it creates the file). A symbolic link at `file` is
 * replaced, not followed.
 */
async function writePrivate(file: string, text: string): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${randomUUID()}.tmp`);
  let handle: FileHandle | undefined;
  try {
    handle = await open(temp, 'wx', 0o600);
    await handle.chmod(0o600); // the umask may have taken the owner's bits too
    await handle.writeFile(text);
    await handle.close();
    handle = undefined;
    await rename(temp, file);
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await rm(temp, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`Cannot write ${file}: ${code ?? (error as Error).name}. Nothing was written there.`);
  }
}

async function pull(values: ReturnType<typeof parse>['values']): Promise<number> {
  const secretId = await secretIdFrom(values);
  const client = new SecretsManagerClient(awsClientOptions(values.region));
  try {
    const live = await readLive(client, secretId);
    if (live === undefined)
      throw new SecretContentError(`The secret ${secretId} holds no text (binary only), so it is not a relay configuration.`);
    const json = parseJson(live);
    if (!json.ok) {
      // Not shown on a terminal or in a log; into a private file only, to be mended there.
      if (!values.output) throw new SecretContentError(notJsonMessage(secretId));
      await writePrivate(values.output, live);
      console.error(`The relay configuration secret ${secretId} is not valid JSON, so the relay cannot use it (it answers 503).`);
      console.error(`Wrote it as it is to ${values.output} (readable only by you): mend it, check it with validate, then push it.`);
      return 1;
    }
    try {
      parseRelayConfig(live);
    } catch (error) {
      if (!(error instanceof ConfigInvalidError)) throw error;
      console.error(`Note: ${secretId} is not a valid relay configuration (the relay answers 503):`);
      for (const p of error.problems) console.error(`  ${p.path}: ${p.problem}`);
    }
    const pretty = `${JSON.stringify(json.value, null, 2)}\n`;
    if (!values.output) {
      process.stdout.write(pretty);
      return 0;
    }
    // The file holds credentials and webhook URLs: readable by its owner only.
    await writePrivate(values.output, pretty);
    console.error(`Wrote ${values.output}. Edit it, check it with validate, then push it.`);
    return 0;
  } finally {
    client.destroy();
  }
}

/** The delivery a file holds, validated as the relay validates one, and its JSON as it came; its problems by path, never a value. */
async function readDelivery(file: string | undefined): Promise<{ message: WebhookMessage; received: unknown }> {
  if (!file) throw new UsageError('Which delivery? For example: npm run config -- explain relay.config.json events/anomaly-alert.json');
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? 'unknown error'}`);
  }
  const json = parseJson(text);
  // As the relay answers such a body: 400 for one that is not JSON, 422 for JSON that is no message.
  if (!json.ok) throw new InvalidFileError(`${file} is not a delivery the relay would take (it answers 400): it is not valid JSON.`);
  const parsed = webhookMessageSchema.safeParse(json.value);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error).map((p) => `  ${p.path}: ${p.problem}`);
    throw new InvalidFileError(`${file} is not a delivery the relay would take (it answers 422):\n${problems.join('\n')}`);
  }
  return { message: parsed.data, received: json.ok ? json.value : undefined };
}

async function explain(
  file: string | undefined,
  deliveryFile: string | undefined,
  values: ReturnType<typeof parse>['values'],
): Promise<number> {
  const { config } = await readConfigFile(file, 'explain');
  const { message, received } = await readDelivery(deliveryFile);
  if (values.owners && values.stack) throw new UsageError('Give --owners or --stack, not both.');
  const owners = values.owners
    ? await ownersFromFile(values.owners)
    : values.stack
      ? await ownersFromStack(values.stack, values.region)
      : undefined;
  const byCostCenter = routesByCostCenter(config);
  // Looked up as the relay looks it up: an AWS id sent as a number gets its leading zeros back.
  const payload = (received as { payload?: { account_id?: unknown; cloud_provider_type?: unknown } }).payload;
  const accountId = ownerAccountIdOf(payload?.account_id, payload?.cloud_provider_type);
  const [record, lastRun] = await Promise.all([
    byCostCenter && owners && accountId ? owners.directory.read(accountId) : undefined,
    byCostCenter ? owners?.lastRun?.() : undefined,
  ]);
  const facts = routeFacts(message, record?.routing.length ? record.routing : undefined);
  const shownAccount =
    accountId !== undefined && accountId !== facts.accountId ? `${facts.accountId} (looked up as ${accountId})` : accountId;
  console.log(`${deliveryFile}: ${facts.objectType}, cloud ${facts.cloudProvider ?? 'none'}, account ${shownAccount ?? 'none'}`);
  if (byCostCenter) {
    const where = owners ? owners.label : 'no owner directory (give --owners FILE or --stack NAME)';
    const centers = facts.costCenters?.map(costCenterLabel).join(', ');
    const age = record?.readAt === undefined ? '' : ` (${recordAge(record.readAt)})`;
    console.log(`cost centers: ${centers ? `${centers}${age}` : `none known, from ${where}: cost-center routes do not match`}`);
    if (owners?.lastRun) console.log(lastRunText(lastRun));
    for (const { entry, instead } of ambiguousEntries(config, facts)) {
      console.log(
        `note: costCenter "${entry}" is an id that more than one payer gives a cost center, so by itself it matches none; ` +
          `name it with its payer's account key (${instead.join(' or ')}) or by its name`,
      );
    }
  }
  console.log('reaches:');
  for (const { destination, routes } of explainRoutes(config, facts)) {
    const type = destinationType(config.destinations[destination]!);
    const why =
      routes.length === 0 ? 'no route matched' : routes.map((i) => `route ${i + 1} (${conditionsOf(config.routes[i]!)})`).join(', ');
    console.log(`  ${destination} (${type}): ${why}`);
  }
  return 0;
}

/** A route's conditions in words: `costCenter Data Platform, cloudProvider aws`; none is "every delivery". */
function conditionsOf(route: RelayConfig['routes'][number]): string {
  const conditions = Object.entries(route.when).flatMap(([name, list]) => (list ? [`${name} ${list.join(' or ')}`] : []));
  return conditions.length > 0 ? conditions.join(', ') : 'every delivery';
}

async function main(): Promise<number> {
  const { values, positionals } = parse();
  const [command, file, ...rest] = positionals;
  if (values.help || command === 'help') {
    console.log(USAGE);
    return 0;
  }
  if (command === 'explain') {
    if (rest.length > 1) throw new UsageError(`Unexpected arguments: ${rest.slice(1).join(' ')}`);
    return explain(file, rest[0], values);
  }
  if (rest.length > 0) throw new UsageError(`Unexpected arguments: ${rest.join(' ')}`);
  switch (command) {
    case 'validate': {
      const { config } = await readConfigFile(file, 'validate');
      console.log(`${file} is valid: ${describe(config)}.`);
      return 0;
    }
    case 'push':
      return push(file, values);
    case 'pull':
      if (file) throw new UsageError('pull takes no file; use --output FILE to write one.');
      return pull(values);
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : 'Which command? validate, push, pull or explain.');
  }
}

guardUnexpectedErrors('npm run config');
try {
  process.exitCode = await main();
} catch (error) {
  if (error instanceof InvalidFileError) {
    console.error(error.message);
    console.error('Nothing was written.');
    process.exitCode = 1;
  } else if (error instanceof SecretContentError) {
    console.error(error.message);
    process.exitCode = 1;
  } else if (error instanceof UsageError) {
    console.error(error.message);
    console.error('Run npm run config -- --help for the commands.');
    process.exitCode = 2;
  } else {
    console.error(unexpectedErrorMessage('npm run config', error));
    process.exitCode = 1;
  }
}
