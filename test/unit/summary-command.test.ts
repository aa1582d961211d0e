// `npm run summary`: its command line, what it says about an answer, and its invocation of the
// deployed function through Lambda's Invoke API (a loopback server in Lambda's place).
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvokeRefusedError, invokeFunction, lambdaEndpoint } from '../../scripts/lambda-invoke.js';
import { UsageError } from '../../scripts/stack.js';
import { describeAnswer, summaryArguments } from '../../scripts/summary-args.js';
import { closeServer } from '../helpers/loopback-server.js';

describe('npm run summary: the command line', () => {
  it('takes one or more destinations, and the stack or the local server', () => {
    expect(summaryArguments(['--destination', 'finops', '--stack', 'relay', '--region', 'eu-west-1'])).toEqual({
      destinations: ['finops'],
      stack: 'relay',
      region: 'eu-west-1',
      url: 'http://127.0.0.1:3000',
    });
    expect(summaryArguments(['-d', 'a', '--destination', 'b'], { PORT: '3100' })).toMatchObject({
      destinations: ['a', 'b'],
      stack: undefined,
      url: 'http://127.0.0.1:3100',
    });
    expect(summaryArguments(['-d', 'a', '--url', 'http://127.0.0.1:4000/'])).toMatchObject({ url: 'http://127.0.0.1:4000' });
    expect(summaryArguments(['--help'])).toBe('help');
  });

  it.each([
    [[], 'Name the destination whose summary to post: --destination NAME.'],
    [['--destination', ' '], 'Name the destination whose summary to post: --destination NAME.'],
    [['-d', 'a', '--stack', 'relay', '--url', 'http://127.0.0.1:3000'], 'Give --stack (a deployed stack) or --url (npm start), not both.'],
    [['-d', 'a', '--stack', ' '], '--stack needs the name of a deployed stack.'],
    [['-d', 'a', '--region', 'eu-west-1'], '--region goes with --stack.'],
    [['-d', 'a', '--url', 'ftp://x'], '--url must be the npm start server, such as http://127.0.0.1:3000.'],
    [['-d', 'a', '--destinaton', 'b'], "Unknown option '--destinaton'"],
    [['-d'], "Option '-d, --destination <value>' argument missing"],
  ])('refuses %j, saying what is wrong', (args, message) => {
    expect(() => summaryArguments(args)).toThrow(UsageError);
    expect(() => summaryArguments(args)).toThrow(message);
  });
});

describe('npm run summary: what it says about the answer', () => {
  it('one line per destination; success only when each got its summary', () => {
    expect(
      describeAnswer({
        summaries: [
          { destination: 'finops', outcome: 'posted', anomalies: 4 },
          { destination: 'quiet', outcome: 'quiet', anomalies: 0 },
          { destination: 'one', outcome: 'posted', anomalies: 1 },
        ],
      }),
    ).toEqual({
      lines: ['finops: posted, naming 4 anomalies', 'quiet: posted, a quiet week (no anomalies)', 'one: posted, naming 1 anomaly'],
      ok: true,
    });
    expect(describeAnswer({ summaries: [{ destination: 'finops', outcome: 'failed', reason: 'http_404' }] })).toEqual({
      lines: ['finops: not posted (http_404)'],
      ok: false,
    });
    expect(describeAnswer({ summaries: [], error: 'summaryFor: "x" is not a destination. Nothing was posted.' })).toEqual({
      lines: ['summaryFor: "x" is not a destination. Nothing was posted.'],
      ok: false,
    });
    expect(describeAnswer({ summaries: [] }).ok).toBe(false);
    expect(describeAnswer('nonsense')).toEqual({ lines: ['The summary function gave an answer this command cannot read.'], ok: false });
  });
});

describe('invoking the deployed summary function', () => {
  let server: ReturnType<typeof createServer>;
  let url = '';
  const received: Array<{ path: string; headers: IncomingMessage['headers']; body: string }> = [];
  let answer: { status: number; headers?: Record<string, string>; body: string } = { status: 200, body: '{}' };

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body });
        res.writeHead(answer.status, { 'content-type': 'application/json', ...answer.headers }).end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => closeServer(server, []));

  const env = () => ({
    AWS_ENDPOINT_URL_LAMBDA: url,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDOPERATOR',
    AWS_SECRET_ACCESS_KEY: 's',
  });

  it('posts the event to Invoke, signed for Lambda in the region, and reads the function’s answer', async () => {
    answer = { status: 200, body: JSON.stringify({ summaries: [{ destination: 'finops', outcome: 'posted', anomalies: 2 }] }) };
    const invocation = await invokeFunction('relay-SummaryFunction-ABC', { summaryFor: ['finops'] }, { env: env() });
    expect(invocation).toEqual({ result: { summaries: [{ destination: 'finops', outcome: 'posted', anomalies: 2 }] } });
    const [call] = received;
    expect(call?.path).toBe('/2015-03-31/functions/relay-SummaryFunction-ABC/invocations');
    expect(JSON.parse(call?.body ?? '')).toEqual({ summaryFor: ['finops'] });
    expect(String(call?.headers['authorization'])).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDOPERATOR\/\d{8}\/eu-west-1\/lambda\/aws4_request/,
    );
  });

  it('tells a function that failed from a call Lambda refused', async () => {
    answer = { status: 200, headers: { 'x-amz-function-error': 'Unhandled' }, body: '{"errorType":"Error"}' };
    expect(await invokeFunction('f', {}, { env: env() })).toMatchObject({ functionError: 'Unhandled' });
    answer = { status: 404, headers: { 'x-amzn-errortype': 'ResourceNotFoundException:http://internal' }, body: '{"Message":"no"}' };
    const refused = invokeFunction('f', {}, { env: env() });
    await expect(refused).rejects.toBeInstanceOf(InvokeRefusedError);
    await expect(refused).rejects.toMatchObject({ code: 'ResourceNotFoundException', status: 404 });
  });

  it('goes to the region’s own endpoint unless the SDK’s endpoint settings say otherwise', () => {
    expect(lambdaEndpoint('eu-west-1', {})).toBe('https://lambda.eu-west-1.amazonaws.com');
    expect(lambdaEndpoint('cn-north-1', {})).toBe('https://lambda.cn-north-1.amazonaws.com.cn');
    expect(lambdaEndpoint('eu-west-1', { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566/' })).toBe('http://127.0.0.1:4566');
  });
});
