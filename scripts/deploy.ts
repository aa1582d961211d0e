// `npm run deploy [-- options]`: the first run asks a few questions (docs/deploy.md), saves the
// answers in samconfig.toml, builds the bundles and deploys them with `sam deploy`, never
// interactively; later runs deploy the saved choices without a question. A first deploy that
// fails deletes its stack (--on-failure DELETE), so the next run starts clean.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CloudFormationClient,
  DeleteStackCommand,
  DescribeStacksCommand,
  type Stack,
  waitUntilStackDeleteComplete,
} from '@aws-sdk/client-cloudformation';
import { type DestinationType, typeFromUrl } from '../lib/notify/kinds.js';
import { runSamWithPrivateConfig, samconfigWithOverrides } from './private-samconfig.js';
import { type Asker, createAsker, PromptCancelled } from './prompt.js';
import { awsClientOptions, awsErrorMessage, regionFrom, UsageError } from './stack.js';
import { guardUnexpectedErrors, unexpectedErrorMessage } from './unexpected.js';

const USAGE = `usage: npm run deploy [-- options] [-- sam deploy options]

The first run asks where alerts go and how the platform signs in (at most six questions;
docs/deploy.md), saves the answers in samconfig.toml, builds and deploys. Later runs deploy
the saved choices without asking. Edit samconfig.toml (parameter_overrides) to change a
setting, or delete it to answer the questions again.

options:
  --region REGION      the region for the first deploy's question's default (else AWS_REGION,
                       AWS_DEFAULT_REGION, then your profile's)
  --no-test-alert      do not offer to send a test alert after the first deploy
  -h, --help           this text
Anything else is passed to sam deploy, except --config-file and --config-env: sam reads its
settings, the secrets among them, from a copy of samconfig.toml that only you can read.`;

const scripts = dirname(fileURLToPath(import.meta.url));
const project = process.cwd();
const samconfigPath = join(project, 'samconfig.toml');
const sam = process.env['SAM_CLI'] ?? 'sam';

const DEFAULT_STACK = 'cost-alert-relay';
// The template's own patterns (template.yaml, Parameters): an answer they refuse would fail the deploy.
const WEBHOOK_URL = /^https:\/\/[^\s"\\]+$/;
const NO_QUOTES = /^[^"\\]*$/;
const NO_SPACES_OR_QUOTES = /^[^\s"\\]+$/;
// The kinds a chat webhook URL alone can be; a kind that needs more (a pager, a bus, a signed
// webhook and its secret) is configured by hand.
const SERVICE: Readonly<Partial<Record<DestinationType, string>>> = {
  slack: 'a Slack incoming webhook',
  teams: 'a Microsoft Teams workflow webhook',
  googlechat: 'a Google Chat webhook',
};

/** Choices samconfig.toml keeps: nothing secret. */
interface Choices {
  stackName: string;
  region: string;
  /** Parameter overrides as SAM reads them: Key="value" pairs separated by spaces. */
  overrides: string;
}

/** What is asked but never saved: NoEcho parameters. SAM reuses a stack's previous values for them. */
type Secrets = Partial<Record<'DefaultDestinationUrl' | 'PlatformPassword', string>>;

interface Options {
  region: string | undefined;
  testAlert: boolean;
  help: boolean;
  passThrough: string[];
}

function parseOptions(args: string[]): Options {
  const options: Options = { region: undefined, testAlert: true, help: false, passThrough: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '-h' || arg === '--help') options.help = true;
    else if (arg === '--no-test-alert') options.testAlert = false;
    else if (arg === '--region' || arg.startsWith('--region=')) {
      const value = arg === '--region' ? args[++i] : arg.slice('--region='.length);
      if (!value) throw new UsageError('--region needs a region, for example --region eu-west-1.');
      options.region = value;
    } else if (arg === '--guided')
      throw new UsageError("npm run deploy asks its own questions; for SAM's guided deploy, run sam deploy --guided yourself.");
    else if (/^--config-(file|env)(=|$)/.test(arg))
      throw new UsageError(
        'npm run deploy gives sam its own copy of samconfig.toml (with the secrets); to deploy with another configuration file, run sam deploy yourself.',
      );
    else options.passThrough.push(arg);
  }
  return options;
}

// ------------------------------------------------------------------ samconfig.toml

const quote = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;

function overridesText(pairs: Array<[string, string]>): string {
  return pairs.map(([key, value]) => `${key}=${quote(value)}`).join(' ');
}

/** Key="value" pairs of a parameter_overrides string, as SAM writes and reads them. */
function overridePairs(text: string): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const match of text.matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
    const raw = match[2] as string;
    pairs.set(match[1] as string, raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/g, '$1') : raw);
  }
  return pairs;
}

/** The string settings of samconfig.toml's default environment (ours, or one sam deploy --guided wrote). */
function readSamconfig(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  let section = '';
  for (const line of text.split(/\r?\n/)) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header) {
      section = (header[1] as string).trim();
      continue;
    }
    if (section !== 'default.global.parameters' && section !== 'default.deploy.parameters') continue;
    const setting = /^\s*([\w-]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*$/.exec(line);
    if (setting) values[setting[1] as string] = JSON.parse(`"${setting[2] as string}"`) as string;
  }
  return values;
}

function savedChoices(options: Options): Choices | undefined {
  if (!existsSync(samconfigPath)) return undefined;
  const values = readSamconfig(readFileSync(samconfigPath, 'utf8'));
  const region = values['region'] ?? regionFrom(options.region);
  if (!region)
    throw new UsageError(`samconfig.toml names no region, and none is set: add region = "eu-west-1" (yours) to it, or set AWS_REGION.`);
  return { stackName: values['stack_name'] ?? DEFAULT_STACK, region, overrides: values['parameter_overrides'] ?? '' };
}

function samconfigText(choices: Choices): string {
  return `# Written by npm run deploy from your answers (docs/deploy.md). Not tracked by git: it is
# your account's. No secrets here: the webhook URL (and the platform password) went to the
# stack, which keeps them; later deploys reuse them. To change a setting, edit
# parameter_overrides (every parameter: docs/deploy.md) and run npm run deploy again.
version = 0.1

[default.global.parameters]
stack_name = ${quote(choices.stackName)}
region = ${quote(choices.region)}

[default.deploy.parameters]
# Always template.yaml, whose CodeUri folders npm run build fills: never a sam build output.
template_file = "template.yaml"
capabilities = "CAPABILITY_IAM"
resolve_s3 = true
confirm_changeset = false
# A first deploy that fails deletes its stack, so the next deploy can create it again.
on_failure = "DELETE"
fail_on_empty_changeset = false
parameter_overrides = ${quote(choices.overrides)}

[default.validate.parameters]
template_file = "template.yaml"
lint = true
`;
}

/** Written whole or not at all: a file beside it takes its place by rename. */
async function writeSamconfig(choices: Choices): Promise<void> {
  const temp = join(project, `.samconfig.toml.${process.pid}.tmp`);
  const handle = await open(temp, 'w', 0o644);
  try {
    await handle.writeFile(samconfigText(choices));
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, samconfigPath);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

// ------------------------------------------------------------------ questions

async function askUntil(ask: () => Promise<string>, problem: (answer: string) => string | undefined): Promise<string> {
  for (;;) {
    const answer = await ask();
    const wrong = problem(answer);
    if (!wrong) return answer;
    process.stderr.write(`  ${wrong}\n`);
  }
}

async function defaultRegion(options: Options): Promise<string | undefined> {
  const found = regionFrom(options.region);
  if (found) return found;
  // The profile's region, as the SDK reads it (AWS_PROFILE, ~/.aws/config).
  const client = new CloudFormationClient({});
  try {
    return await client.config.region();
  } catch {
    return undefined;
  } finally {
    client.destroy();
  }
}

async function askWebhookUrl(asker: Asker): Promise<string> {
  process.stderr.write(
    'Paste the webhook URL of the chat channel that gets the alerts: a Slack incoming webhook,\na Teams workflow webhook or a Google Chat webhook. It is a secret, so it is not shown.\n',
  );
  const url = await askUntil(
    () => asker.askSecret('Chat webhook URL: '),
    (answer) =>
      WEBHOOK_URL.test(answer.trim()) ? undefined : 'That is not an https:// URL without spaces or quotes. Paste the whole webhook URL.',
  );
  process.stderr.write(`  Got it: ${SERVICE[typeFromUrl(url.trim())] ?? 'a webhook'}.\n`);
  return url.trim();
}

async function askPlatformPassword(asker: Asker): Promise<string> {
  return askUntil(
    () => asker.askSecret('Platform password (not shown): '),
    (answer) =>
      !answer
        ? 'The platform login needs the password of that platform user (Ctrl-C stops without saving anything).'
        : NO_QUOTES.test(answer)
          ? undefined
          : 'The template cannot take a password with " or \\ in it: see docs/deploy.md, "A platform password with a quote".',
  );
}

/** The first run's questions: five, and one more after the deploy (the test alert). */
async function askChoices(asker: Asker, options: Options): Promise<{ choices: Choices; secrets: Secrets }> {
  process.stderr.write(
    'First deploy of Cost Alert Relay: a few questions; Enter takes the [default]. Ctrl-C stops without saving anything.\n\n',
  );
  const stackName = await askUntil(
    async () => (await asker.ask(`Stack name [${DEFAULT_STACK}]: `)) || DEFAULT_STACK,
    (answer) =>
      /^[A-Za-z][A-Za-z0-9-]{0,39}$/.test(answer) ? undefined : 'Letters, digits and hyphens, starting with a letter, at most 40.',
  );
  const suggested = await defaultRegion(options);
  const region = await askUntil(
    async () => (await asker.ask(suggested ? `AWS region [${suggested}]: ` : 'AWS region (for example eu-west-1): ')) || suggested || '',
    (answer) => (/^[a-z]{2}(-[a-z]+)+-\d+$/.test(answer) ? undefined : 'A region name such as eu-west-1 or us-east-1.'),
  );
  const secrets: Secrets = { DefaultDestinationUrl: await askWebhookUrl(asker) };

  const methods: Record<string, string> = { basic: 'Basic', none: 'None', sso: 'SSO' };
  const method = await askUntil(
    async () =>
      (
        (await asker.ask(
          'How the platform signs in to the relay: basic (the stack generates a strong password), none, or sso [basic]: ',
        )) || 'basic'
      ).toLowerCase(),
    (answer) => (answer in methods ? undefined : 'basic, none or sso.'),
  );
  const overrides: Array<[string, string]> = [['AuthMethod', methods[method] as string]];
  if (method === 'basic')
    process.stderr.write(
      '  The stack generates a 32-character password and keeps it in Secrets Manager; the end of the deploy says where.\n',
    );
  if (method === 'none')
    process.stderr.write("  Anyone who has the relay's URL can post to your channel. You can switch to basic later (docs/deploy.md).\n");
  if (method === 'sso') {
    const answer = (question: string, pattern: RegExp, problem: string) =>
      askUntil(
        () => asker.ask(question),
        (a) => (pattern.test(a) ? undefined : problem),
      );
    overrides.push(['SsoIssuer', await answer("SSO issuer URL (as on the platform's channel page): ", WEBHOOK_URL, 'An https:// URL.')]);
    overrides.push(['SsoClientId', await answer('SSO client ID: ', NO_SPACES_OR_QUOTES, 'Needed; no spaces, quotes or backslashes.')]);
    overrides.push(['SsoScope', await answer('SSO scope name: ', NO_SPACES_OR_QUOTES, 'Needed; no spaces, quotes or backslashes.')]);
  }

  const rotate = await askUntil(
    async () =>
      ((await asker.ask('Also keep a platform API key fresh for your other tools (needs a platform login)? [y/N]: ')) || 'n').toLowerCase(),
    (answer) => (/^(y|yes|n|no)$/.test(answer) ? undefined : 'y or n.'),
  );
  if (rotate.startsWith('y')) {
    overrides.push(['ApiKeyRotation', 'Enabled']);
    overrides.push([
      'PlatformUsername',
      await askUntil(
        () => asker.ask('Platform user (e-mail login): '),
        (a) => (a && NO_QUOTES.test(a) ? undefined : 'Needed; no quotes or backslashes.'),
      ),
    ]);
    secrets.PlatformPassword = await askPlatformPassword(asker);
    overrides.push([
      'ApiKeyAccount',
      await askUntil(
        () => asker.ask('Platform account for the key (account key, cloud account id or name; npm run apikey -- --list shows them): '),
        (a) => (a && NO_QUOTES.test(a) ? undefined : 'Needed; no quotes or backslashes.'),
      ),
    ]);
  } else {
    overrides.push(['ApiKeyRotation', 'Disabled']);
  }
  return { choices: { stackName, region, overrides: overridesText(overrides) }, secrets };
}

// ------------------------------------------------------------------ the stack

async function describeStack(client: CloudFormationClient, stackName: string): Promise<Stack | undefined> {
  try {
    return (await client.send(new DescribeStacksCommand({ StackName: stackName }))).Stacks?.[0];
  } catch (error) {
    if ((error as Error).name === 'ValidationError' && /does not exist/.test((error as Error).message)) return undefined;
    throw new UsageError(`Could not look up the stack ${stackName}: ${awsErrorMessage(error)}`);
  }
}

/**
 * Whether the deploy creates the stack (and so needs the secrets). A stack whose creation failed
 * and rolled back (ROLLBACK_COMPLETE: SAM's default before --on-failure DELETE) can only be
 * deleted; it holds nothing, so it is deleted here and created again.
 */
async function prepareStack(choices: Choices): Promise<'create' | 'update'> {
  const client = new CloudFormationClient(awsClientOptions(choices.region));
  try {
    const stack = await describeStack(client, choices.stackName);
    const status = stack?.StackStatus;
    if (status === undefined || status === 'REVIEW_IN_PROGRESS') return 'create';
    if (status === 'ROLLBACK_COMPLETE') {
      console.log(
        `The stack ${choices.stackName} is in ROLLBACK_COMPLETE: an earlier first deploy failed and left it empty, and such a stack cannot be updated. Deleting it so that this deploy can create it again...`,
      );
      try {
        await client.send(new DeleteStackCommand({ StackName: choices.stackName }));
        await waitUntilStackDeleteComplete({ client, maxWaitTime: 900, minDelay: 2, maxDelay: 10 }, { StackName: choices.stackName });
      } catch (error) {
        throw new UsageError(
          `Could not delete the failed stack ${choices.stackName}: ${awsErrorMessage(error)} Delete it in the CloudFormation console, then run npm run deploy again.`,
        );
      }
      console.log('Deleted.');
      return 'create';
    }
    if (status === 'ROLLBACK_FAILED' || status === 'DELETE_FAILED') {
      throw new UsageError(
        `The stack ${choices.stackName} is in ${status} and cannot be deployed to. Delete it in the CloudFormation console (or: aws cloudformation delete-stack --stack-name ${choices.stackName} --region ${choices.region}), then run npm run deploy again.`,
      );
    }
    return 'update';
  } finally {
    client.destroy();
  }
}

async function stackAfterDeploy(choices: Choices): Promise<Stack | undefined> {
  const client = new CloudFormationClient(awsClientOptions(choices.region));
  try {
    return await describeStack(client, choices.stackName);
  } finally {
    client.destroy();
  }
}

/**
 * What to enter on the platform's webhook channel page. The Basic password is not printed: this
 * output stays in terminal scrollback and CI logs. It is one command away, for whoever asks.
 */
function printChannelSettings(stack: Stack, choices: Choices): void {
  const outputs = Object.fromEntries((stack.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  const parameters = Object.fromEntries((stack.Parameters ?? []).map((p) => [p.ParameterKey, p.ParameterValue]));
  const saved = overridePairs(choices.overrides);
  const setting = (name: string) => saved.get(name) ?? parameters[name];
  const method = outputs['AuthMethod'] ?? setting('AuthMethod') ?? 'Basic';
  const pull = `npm run config -- pull --stack ${choices.stackName} --region ${choices.region} --output relay.config.json`;
  const lines = [
    '',
    `Deployed ${choices.stackName} in ${choices.region}. On the cost platform's channels page, add a webhook channel with:`,
    `  Destination URL:        ${outputs['WebhookUrl'] ?? '(no WebhookUrl output: is this a Cost Alert Relay stack?)'}`,
  ];
  if (method === 'Basic') {
    lines.push(
      '  Authentication method:  Basic Authentication',
      `  User name:              ${setting('BasicUsername') ?? 'relay'}`,
      '  Password:               not printed here (this output stays in your scrollback and logs). It is',
      `                          auth.basic.password in the relay configuration secret ${outputs['RelayConfigSecretArn'] ?? `${choices.stackName}/relay-config`};`,
      `                          get it into a file only you can read with: ${pull}`,
      "                          (then delete that file), or print it with the stack's BasicCredentialsCommand output.",
    );
  } else if (method === 'SSO') {
    lines.push(
      '  Authentication method:  SSO authentication',
      `  Issuer URL:             ${setting('SsoIssuer') ?? ''}`,
      `  Client ID:              ${setting('SsoClientId') ?? ''}`,
      `  Scope name:             ${setting('SsoScope') ?? ''}`,
    );
  } else {
    lines.push('  Authentication method:  No Authentication');
  }
  lines.push('  HTTP headers:           none needed (docs/deploy.md says how to require one).', '');
  console.log(lines.join('\n'));
}

/** `send --test` without --mention: the relay leaves the configured mentions out, so the test pings no one. */
function sendTestAlert(choices: Choices): number {
  const result = spawnSync(
    process.execPath,
    [...process.execArgv, join(scripts, 'send.ts'), '--test', '--stack', choices.stackName, '--region', choices.region],
    { stdio: 'inherit' },
  );
  return result.status ?? 1;
}

// ------------------------------------------------------------------ main

function run(command: string, args: string[]): number {
  const result = spawnSync(command, args, { stdio: 'inherit' });
  return result.status ?? 1;
}

/**
 * Why the SDK's credential chain finds no credentials here (environment, profile, SSO, container
 * or instance role), or undefined when it finds some. Whether they are valid, AWS says at the deploy.
 */
async function missingCredentials(region: string | undefined): Promise<string | undefined> {
  // The chain needs no region; the client does, and the deploy asks for one only later.
  const client = new CloudFormationClient({ region: regionFrom(region) ?? 'us-east-1' });
  try {
    await client.config.credentials();
    return undefined;
  } catch (error) {
    return awsErrorMessage(error);
  } finally {
    client.destroy();
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  if (options.help) {
    console.log(USAGE);
    return 0;
  }
  if (spawnSync(sam, ['--version'], { stdio: 'ignore' }).status !== 0) {
    console.error('The AWS SAM CLI is needed to deploy and was not found (sam --version failed).');
    console.error('Install it: https://docs.aws.amazon.com/serverless-application-model/latest/developerguide/install-sam-cli.html');
    return 2;
  }

  // Before the first question: a deploy without credentials would otherwise ask everything, the
  // webhook URL included, save samconfig.toml, and only then fail.
  const credentialsProblem = await missingCredentials(options.region);
  if (credentialsProblem) {
    console.error(`No AWS credentials were found, so nothing can be deployed: ${credentialsProblem}`);
    console.error(
      'Set them first (aws configure, AWS_PROFILE, or aws sso login); `aws sts get-caller-identity` answers once they work. Nothing was asked or saved.',
    );
    return 2;
  }

  const asker = createAsker();
  try {
    let choices = savedChoices(options);
    let secrets: Secrets = {};
    const firstRun = choices === undefined;
    if (choices === undefined) {
      ({ choices, secrets } = await askChoices(asker, options));
      await writeSamconfig(choices);
      console.log(`\nSaved your choices in samconfig.toml (no secrets in it); later runs of npm run deploy deploy them without asking.`);
    } else {
      console.log(`Deploying the choices in samconfig.toml: stack ${choices.stackName} in ${choices.region}.`);
    }

    const action = await prepareStack(choices);
    if (action === 'create' && !secrets.DefaultDestinationUrl) {
      // The stack keeps the secrets, samconfig.toml does not: a stack that is not there (yet, or
      // any more) needs them again.
      process.stderr.write(
        `The stack ${choices.stackName} does not exist in ${choices.region} yet (or its first deploy failed and was deleted), so it needs the secrets again; they are never saved on disk.\n`,
      );
      secrets.DefaultDestinationUrl = await askWebhookUrl(asker);
      // The rotation and the owner directory sign in with the same platform login.
      const pairs = overridePairs(choices.overrides);
      if (pairs.get('ApiKeyRotation') === 'Enabled' || pairs.get('OwnerRouting') === 'Enabled') {
        secrets.PlatformPassword = await askPlatformPassword(asker);
      }
    }

    // BUILD_SCRIPT lets the tests stand in for the build, which would replace dist/ under other tests' feet.
    const built = run(process.execPath, [process.env['BUILD_SCRIPT'] ?? join(scripts, 'build.mjs')]);
    if (built !== 0) return built;

    const secretPairs = Object.entries(secrets).filter((pair): pair is [string, string] => pair[1] !== undefined);
    const overrides = [choices.overrides, overridesText(secretPairs)].filter(Boolean).join(' ');
    // The parameters reach sam in a private copy of samconfig.toml, never on its command line,
    // where any local user could read the secrets among them.
    const config = samconfigWithOverrides(readFileSync(samconfigPath, 'utf8'), overrides);
    // Never `sam build`: template.yaml's CodeUri folders are the bundles just built and tested.
    const deployArgs = (configFile: string) => [
      'deploy',
      '--config-file',
      configFile,
      '--config-env',
      'default',
      '--stack-name',
      choices.stackName,
      '--region',
      choices.region,
      // Absolute, so that it is the project's template whatever folder sam resolves paths against.
      '--template-file',
      join(project, 'template.yaml'),
      '--capabilities',
      'CAPABILITY_IAM',
      '--resolve-s3',
      '--no-confirm-changeset',
      '--no-fail-on-empty-changeset',
      '--on-failure',
      'DELETE',
      ...options.passThrough,
    ];
    const deployed = await runSamWithPrivateConfig(sam, deployArgs, config);
    if (deployed.signal) {
      console.error(
        `\nStopped (${deployed.signal}) while sam deploy ran. CloudFormation may still be changing the stack ${choices.stackName}: once it is done (CloudFormation console), run npm run deploy again.`,
      );
      return deployed.code;
    }
    if (deployed.code !== 0) {
      console.error(
        `\nsam deploy failed (exit ${deployed.code}); the reason is above. A first deploy that fails deletes its stack, and your choices are in samconfig.toml: fix the cause, then run npm run deploy again.`,
      );
      return deployed.code;
    }

    const stack = await stackAfterDeploy(choices);
    if (!stack) {
      console.error(`sam deploy succeeded but the stack ${choices.stackName} cannot be found in ${choices.region}.`);
      return 1;
    }
    printChannelSettings(stack, choices);
    const testCommand = `npm run send -- --test --stack ${choices.stackName} --region ${choices.region}`;
    if (firstRun && options.testAlert) {
      const answer = (
        await asker.ask('Send a test alert to your channel now? It says it is a test and pings no one. [Y/n]: ').catch((error: unknown) => {
          if (error instanceof PromptCancelled) return 'n';
          throw error;
        })
      ).toLowerCase();
      if (answer === '' || answer.startsWith('y')) return sendTestAlert(choices) === 0 ? 0 : 1;
    }
    console.log(`To check the channel end to end: ${testCommand}`);
    return 0;
  } finally {
    asker.close();
  }
}

guardUnexpectedErrors('npm run deploy');
try {
  process.exitCode = await main();
} catch (error) {
  if (error instanceof PromptCancelled) {
    console.error(
      `Stopped (${error.how}) before deploying: ${existsSync(samconfigPath) ? 'nothing new was saved' : 'nothing was saved (no samconfig.toml)'}. npm run deploy asks again.`,
    );
    process.exitCode = 130;
  } else if (error instanceof UsageError) {
    console.error(error.message);
    process.exitCode = 2;
  } else {
    console.error(unexpectedErrorMessage('npm run deploy', error));
    process.exitCode = 1;
  }
}
