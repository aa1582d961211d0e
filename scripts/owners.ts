// `npm run owners`: the accounts the owner directory knows, their cost centers, and where an
// anomaly alert from each goes under the relay's configuration: the routing to check before
// an anomaly happens. Names and ids only; never a URL, key or password.

import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ConfigInvalidError } from '../lib/config/errors.js';
import { parseRelayConfig } from '../lib/config/load.js';
import type { RelayConfig } from '../lib/config/schema.js';
import type { RoutingCostCenter } from '../lib/message/cost-center.js';
import { destinationType } from '../lib/notify/kinds.js';
import { explainRoutes, routeFacts } from '../lib/routing/route.js';
import { ownersFromFile, ownersFromStack } from './owners-source.js';
import { costCenterLabel, lastRunText, recordAge } from './owners-text.js';
import { readSecretString, SecretContentError, stackOutputs, UsageError } from './stack.js';
import { guardUnexpectedErrors, unexpectedErrorMessage } from './unexpected.js';

const USAGE = `usage:
  npm run owners -- --stack NAME [--region REGION]
      Lists the accounts in the stack's owner directory (what directory-sync last read), the cost
      centers that cover each, and where an anomaly alert from each account goes under the live
      relay configuration; how old each record is, and how directory-sync's last run ended. The
      directory does not say which cloud an account is in: where routes name cloud providers and
      that changes where an account's alerts go, each is listed.
  npm run owners -- --owners FILE --config FILE
      The same from an owners file and a configuration file (npm start's, for one).

Exit codes: 0 done, 1 unusable configuration, 2 usage mistake or AWS unreachable.`;

function parse() {
  try {
    return parseArgs({
      options: {
        stack: { type: 'string' },
        region: { type: 'string' },
        owners: { type: 'string' },
        config: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function configFrom(values: ReturnType<typeof parse>['values'], outputs: Record<string, string> | undefined): Promise<RelayConfig> {
  let text: string;
  let where: string;
  if (values.config) {
    where = values.config;
    text = await readFile(values.config, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read ${values.config}: ${error.code ?? 'unknown error'}`);
    });
  } else {
    const secretId = outputs?.['RelayConfigSecretArn'];
    if (!secretId) throw new UsageError(`The stack ${values.stack} has no RelayConfigSecretArn output; is it a Cost Alert Relay stack?`);
    where = secretId;
    text = await readSecretString(secretId, values.region);
  }
  try {
    return parseRelayConfig(text);
  } catch (error) {
    if (!(error instanceof ConfigInvalidError)) throw error;
    throw new SecretContentError(
      `The relay configuration in ${where} is not valid:\n${error.problems.map((p) => `  ${p.path}: ${p.problem}`).join('\n')}`,
    );
  }
}

async function main(): Promise<number> {
  const { values } = parse();
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  if (values.stack ? values.owners || values.config : !(values.owners && values.config)) {
    throw new UsageError('Give --stack NAME, or --owners FILE with --config FILE.');
  }
  const outputs = values.stack ? await stackOutputs(values.stack, values.region) : undefined;
  const owners = values.owners
    ? await ownersFromFile(values.owners)
    : await ownersFromStack(values.stack as string, values.region, outputs);
  const [config, records, lastRun] = await Promise.all([configFrom(values, outputs), owners.list(), owners.lastRun?.()]);
  if (owners.lastRun) console.log(lastRunText(lastRun));
  if (records.length === 0) {
    console.log(`${owners.label} knows no account yet${values.stack ? ' (has directory-sync run? OwnerRouting must be Enabled)' : ''}.`);
    return 0;
  }
  console.log(`${records.length} account${records.length === 1 ? '' : 's'} in ${owners.label}; where an anomaly alert from each goes:`);
  const providers = providersNamed(config);
  for (const { accountId, routing, readAt } of records) {
    const centers = routing.map(costCenterLabel).join(', ') || 'no cost center';
    const age = readAt === undefined ? '' : `; ${recordAge(readAt)}`;
    console.log(`  ${accountId}: ${centers} -> ${whereAlertsGo(config, providers, accountId, routing)}${age}`);
  }
  return 0;
}

/** The cloud providers routes name, each once whatever its case, as the first route spells it. */
function providersNamed(config: RelayConfig): string[] {
  const named = new Map<string, string>();
  for (const provider of config.routes.flatMap((route) => route.when.cloudProvider ?? [])) {
    if (!named.has(provider.toLowerCase())) named.set(provider.toLowerCase(), provider);
  }
  return [...named.values()];
}

/**
 * The destinations of an anomaly alert from the account. The directory does not say which cloud an
 * account is in, so where routes name providers, each provider is tried; when they disagree, the
 * line says where an alert from each goes, and where one from any other provider goes.
 */
function whereAlertsGo(
  config: RelayConfig,
  providers: readonly string[],
  accountId: string,
  costCenters: readonly RoutingCostCenter[],
): string {
  const to = (provider: string | undefined) =>
    explainRoutes(
      config,
      routeFacts(
        {
          metadata: { object_type: 'anomaly_alert', timestamp: undefined, destination_url: undefined },
          payload: { title: undefined, message: undefined, cloud_provider_type: provider, account_id: accountId, account_name: undefined },
        },
        costCenters,
      ),
    )
      .map(({ destination }) => `${destination} (${destinationType(config.destinations[destination]!)})`)
      .join(', ');
  const other = to(undefined);
  const each = providers.map((provider) => [provider, to(provider)] as const);
  if (each.every(([, destinations]) => destinations === other)) return other;
  return `by cloud provider: ${[...each, ['any other', other] as const].map(([provider, destinations]) => `${provider}: ${destinations}`).join('; ')}`;
}

guardUnexpectedErrors('npm run owners');
try {
  process.exitCode = await main();
} catch (error) {
  if (error instanceof SecretContentError) {
    console.error(error.message);
    process.exitCode = 1;
  } else if (error instanceof UsageError) {
    console.error(error.message);
    console.error('Run npm run owners -- --help for the options.');
    process.exitCode = 2;
  } else {
    console.error(unexpectedErrorMessage('npm run owners', error));
    process.exitCode = 1;
  }
}
