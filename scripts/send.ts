// `npm run send`: posts a sample delivery to the local relay, any URL, or a deployed stack.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { authConfigSchema, describeIssues } from '../lib/config/schema.js';
import { QUIET_TEST, TEST_DELIVERY_HEADER } from '../lib/inbound/request.js';
import { parseJson } from '../lib/shared/json.js';
import { notJsonMessage, readSecretString, SecretContentError, stackOutputs, UsageError } from './stack.js';
import { guardUnexpectedErrors, unexpectedErrorMessage } from './unexpected.js';

const USAGE = `usage: npm run send -- [options] <file>
       npm run send -- --test [--mention] [options]

Posts <file> (a webhook message, e.g. events/anomaly-alert.json) to the relay and prints its answer.
--test posts events/test-alert.json instead, stamped with the current time: a message titled
"Test alert from Cost Alert Relay" that says it is a test, to check a channel end to end. It
pings no one: it asks the relay (header ${TEST_DELIVERY_HEADER}: ${QUIET_TEST}) to leave out the
mentions configured for the destinations, unless --mention is given.
Exit code 0 for a 2xx answer, 1 for any other answer, no answer, or a stack whose relay configuration
secret cannot be used (named by path, never shown), 2 for a usage mistake.

options:
  --test                  post the test alert (events/test-alert.json) instead of a file
  --mention               with --test: the relay adds each destination's configured mention, as it
                          does to every real alert, so the test notifies those people too
  --url URL               where to post (default: $RELAY_URL or http://127.0.0.1:3000/webhook, the local relay);
                          credentials go in --basic, never in the URL
  --stack NAME            post to a deployed stack: the URL comes from its WebhookUrl output, and Basic
                          credentials and custom headers from its relay configuration secret
                          (needs AWS credentials allowed to read them)
  --region REGION         the stack's region (default: AWS_REGION, AWS_DEFAULT_REGION, then your profile's)
  --basic USER:PASSWORD   HTTP Basic credentials
  --bearer TOKEN          an SSO access token (Authorization: Bearer)
  --header "Name: value"  an extra header; repeat for more
  --content-type TYPE     default application/json
  -h, --help              this text`;

interface Request {
  url: string;
  headers: Record<string, string>;
}

function parse(): { values: Record<string, string | string[] | boolean | undefined>; file: string | undefined } {
  try {
    const { values, positionals } = parseArgs({
      allowPositionals: true,
      options: {
        test: { type: 'boolean' },
        mention: { type: 'boolean' },
        url: { type: 'string' },
        stack: { type: 'string' },
        region: { type: 'string' },
        basic: { type: 'string' },
        bearer: { type: 'string' },
        header: { type: 'string', multiple: true, default: [] },
        'content-type': { type: 'string', default: 'application/json' },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (positionals.length > 1) throw new UsageError(`One file at a time; got ${positionals.length}.`);
    return { values, file: positionals[0] };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError((error as Error).message);
  }
}

function headerPair(header: string): [string, string] {
  const colon = header.indexOf(':');
  if (colon <= 0)
    throw new UsageError('--header needs "Name: value"; one of yours has no colon (its text is not repeated: it may be a secret).');
  return [header.slice(0, colon).trim(), header.slice(colon + 1).trim()];
}

/**
 * The headers a stack's relay configuration asks of a delivery. The secret is checked before any
 * of it is used: a broken one is named by path, never quoted.
 */
function credentialsFrom(text: string, secretId: string): Record<string, string> {
  const json = parseJson(text);
  if (!json.ok) throw new SecretContentError(notJsonMessage(secretId));
  const auth = authConfigSchema.safeParse((json.value as { auth?: unknown } | null)?.auth);
  if (!auth.success) {
    const problems = describeIssues(auth.error, authConfigSchema).map(
      (p) => `  auth${p.path === '(root)' ? '' : `.${p.path}`}: ${p.problem}`,
    );
    throw new SecretContentError(
      `The relay configuration secret ${secretId} has no usable auth block:\n${problems.join('\n')}\nCheck it with npm run config -- pull --secret-id ${secretId} --output FILE, then validate.`,
    );
  }
  const { method, basic, headers: custom } = auth.data;
  const headers: Record<string, string> = {};
  if (method === 'basic' && basic)
    headers['authorization'] = `Basic ${Buffer.from(`${basic.username}:${basic.password}`).toString('base64')}`;
  for (const [i, { key, value }] of custom.entries()) {
    // fetch would refuse a value with a line break, quoting it in its error.
    if (!sendable(key, value))
      throw new SecretContentError(
        `The relay configuration secret ${secretId} has a value at auth.headers[${i}] (${key}) that cannot be sent as an HTTP header.`,
      );
    headers[key] = value;
  }
  if (method === 'sso') console.error('The stack uses SSO: pass a token from your identity provider with --bearer.');
  return headers;
}

function sendable(name: string, value: string): boolean {
  try {
    new Headers([[name, value]]);
    return true;
  } catch {
    return false;
  }
}

/** Destinations whose configuration adds a mention: the relay puts it on every alert it posts there but a quiet test. */
function mentioningDestinations(text: string): string[] {
  const json = parseJson(text);
  const destinations = json.ok ? (json.value as { destinations?: unknown } | null)?.destinations : undefined;
  if (typeof destinations !== 'object' || destinations === null) return [];
  return Object.entries(destinations).flatMap(([name, d]) => ((d as { mention?: unknown } | null)?.mention ? [name] : []));
}

/** The URL and credentials of a deployed stack, so a first test needs nothing copied by hand. */
async function fromStack(stack: string, region: string | undefined, test: { mention: boolean } | undefined): Promise<Request> {
  const outputs = await stackOutputs(stack, region);
  const url = outputs['WebhookUrl'];
  if (!url) throw new UsageError(`The stack ${stack} has no WebhookUrl output; is it a Cost Alert Relay stack?`);
  const secretId = outputs['RelayConfigSecretArn'];
  if (!secretId) return { url, headers: {} };
  const text = await readSecretString(secretId, region);
  const headers = credentialsFrom(text, secretId);
  const mentioning = mentioningDestinations(text);
  if (test && mentioning.length > 0) {
    const which = `${mentioning.join(', ')} ${mentioning.length === 1 ? 'has' : 'have'} a mention configured`;
    console.error(
      test.mention
        ? `Note: ${which}; with --mention the relay adds it to this test alert, so it notifies those people too (its text says it is a test).`
        : `Note: ${which}; the relay leaves it out of this test alert, which notifies no one. Add --mention to test the mention too.`,
    );
  }
  return { url, headers };
}

/**
 * The URL to post to, refused when it carries credentials (user:password@): they would be sent
 * in the clear to whatever answers and end up in logs and shell history. The refusal names the
 * URL without them.
 */
function plainUrl(given: string, from: string): string {
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(
      `${from} is not a URL (it is not repeated here: it may hold a secret). For example: --url http://127.0.0.1:3000/webhook`,
    );
  }
  if (url.username || url.password) {
    url.username = '';
    url.password = '';
    throw new UsageError(
      `${from} has credentials in it; nothing was sent. Give them with --basic USER:PASSWORD instead: --url ${url.href} --basic USER:PASSWORD`,
    );
  }
  return given;
}

/** The test alert, stamped now: the relay posts the same message only once a day, so each test must differ. */
async function testAlert(): Promise<Buffer> {
  const message = JSON.parse(await readFile(new URL('../events/test-alert.json', import.meta.url), 'utf8')) as {
    metadata: Record<string, unknown>;
  };
  message.metadata['timestamp'] = new Date().toISOString();
  return Buffer.from(JSON.stringify(message));
}

async function main(): Promise<number> {
  const { values, file } = parse();
  if (values['help']) {
    console.log(USAGE);
    return 0;
  }
  const test = values['test'] === true;
  const mention = values['mention'] === true;
  if (test && file) throw new UsageError('--test posts the test alert (events/test-alert.json); give no file with it.');
  if (mention && !test)
    throw new UsageError('--mention goes with --test: the relay adds the configured mentions to every other alert anyway.');
  if (!file && !test)
    throw new UsageError('Which file? For example: npm run send -- events/anomaly-alert.json (or --test for the test alert)');
  if (values['url'] && values['stack']) throw new UsageError('Give --url or --stack, not both.');
  const extra = (values['header'] as string[]).map(headerPair);
  const stack = values['stack'] as string | undefined;
  const given = values['url'] as string | undefined;
  const url = stack
    ? undefined
    : given
      ? plainUrl(given, '--url')
      : process.env['RELAY_URL']
        ? plainUrl(process.env['RELAY_URL'], 'RELAY_URL')
        : 'http://127.0.0.1:3000/webhook';

  let body: Buffer;
  if (file) {
    try {
      body = await readFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new UsageError(code === 'ENOENT' ? `No such file: ${file}` : `Cannot read ${file}: ${code ?? (error as Error).message}`);
    }
  } else {
    body = await testAlert();
  }

  const target: Request = stack
    ? await fromStack(stack, values['region'] as string | undefined, test ? { mention } : undefined)
    : { url: url as string, headers: {} };
  const headers: Record<string, string> = { ...target.headers, 'content-type': values['content-type'] as string };
  if (test && !mention) headers[TEST_DELIVERY_HEADER] = QUIET_TEST;
  if (values['basic']) headers['authorization'] = `Basic ${Buffer.from(values['basic'] as string).toString('base64')}`;
  if (values['bearer']) headers['authorization'] = `Bearer ${values['bearer'] as string}`;
  for (const [name, value] of extra) headers[name] = value;
  for (const [name, value] of Object.entries(headers)) {
    if (!sendable(name, value))
      throw new UsageError(`The ${name} header cannot be sent: its name or value has characters HTTP does not allow.`);
  }

  let response: Response;
  try {
    response = await fetch(target.url, { method: 'POST', headers, body, redirect: 'manual' });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    // Without a cause the request was never sent, and the message may quote a header's value.
    const why = cause?.code ?? cause?.message ?? `the request could not be made (${(error as Error).name})`;
    const hint = stack ? '' : ' Is the relay running (npm start)?';
    console.error(`Could not reach ${target.url}: ${why}.${hint}`);
    return 1;
  }
  console.log(`HTTP ${response.status}`);
  console.log(await response.text());
  if (test && response.ok) console.log('Test alert sent: look for "Test alert from Cost Alert Relay" in your channel.');
  return response.ok ? 0 : 1;
}

guardUnexpectedErrors('npm run send');
try {
  process.exitCode = await main();
} catch (error) {
  if (error instanceof UsageError) {
    console.error(error.message);
    console.error('Run npm run send -- --help for every option.');
    process.exitCode = 2;
  } else if (error instanceof SecretContentError) {
    console.error(error.message);
    process.exitCode = 1;
  } else {
    console.error(unexpectedErrorMessage('npm run send', error));
    process.exitCode = 1;
  }
}
