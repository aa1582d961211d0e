// The least a Lambda function can do to call an AWS JSON API or post to a chat service: one
// node:http request each, signed with Signature Version 4 by hand from the environment's
// credentials. Shared by the limit floors; no SDK, no retries, no validation.
import { createHash, createHmac } from 'node:crypto';
import { request } from 'node:http';

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** `20260101T000000Z`, and its first eight characters as the date of the credential scope. */
const amzDate = (date: Date) =>
  date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** Signature Version 4 headers for a POST of `body` to `url`, with Lambda's environment credentials. */
export function signedHeaders(url: URL, service: string, headers: Record<string, string>, body: string): Record<string, string> {
  const env = process.env;
  const timestamp = amzDate(new Date());
  const all: Record<string, string> = { ...headers, host: url.host, 'x-amz-date': timestamp };
  if (env['AWS_SESSION_TOKEN']) all['x-amz-security-token'] = env['AWS_SESSION_TOKEN'];
  const names = Object.keys(all)
    .map((name) => name.toLowerCase())
    .sort();
  const lower = Object.fromEntries(Object.entries(all).map(([name, value]) => [name.toLowerCase(), value.trim()]));
  const signed = names.join(';');
  const canonical = ['POST', url.pathname || '/', '', ...names.map((name) => `${name}:${lower[name]}`), '', signed, sha256(body)].join(
    '\n',
  );
  const scope = `${timestamp.slice(0, 8)}/${env['AWS_REGION']}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', timestamp, scope, sha256(canonical)].join('\n');
  let key: Buffer = hmac(`AWS4${env['AWS_SECRET_ACCESS_KEY']}`, timestamp.slice(0, 8));
  for (const part of [env['AWS_REGION'] ?? '', service, 'aws4_request']) key = hmac(key, part);
  const signature = createHmac('sha256', key).update(stringToSign).digest('hex');
  return {
    ...all,
    authorization: `AWS4-HMAC-SHA256 Credential=${env['AWS_ACCESS_KEY_ID']}/${scope}, SignedHeaders=${signed}, Signature=${signature}`,
  };
}

/** POSTs `body`; resolves with the answer's text when it is a 2xx, rejects otherwise. */
export function post(url: URL, headers: Record<string, string>, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) resolve(text);
        else reject(new Error(`${url.href} answered ${status}: ${text.slice(0, 200)}`));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** One call of an AWS JSON-protocol action (`X-Amz-Target`) at AWS_ENDPOINT_URL. */
export async function awsJson(service: string, target: string, jsonVersion: '1.0' | '1.1', input: unknown): Promise<unknown> {
  const url = new URL(process.env['AWS_ENDPOINT_URL']!);
  const body = JSON.stringify(input);
  const headers = signedHeaders(url, service, { 'content-type': `application/x-amz-json-${jsonVersion}`, 'x-amz-target': target }, body);
  return JSON.parse(await post(url, headers, body));
}

interface FloorConfig {
  destinations: { default: { url: string } };
}

let config: Promise<FloorConfig> | undefined;

/** The relay configuration, read once per container as the relay caches it. */
export function readConfig(): Promise<FloorConfig> {
  config ??= awsJson('secretsmanager', 'secretsmanager.GetSecretValue', '1.1', { SecretId: process.env['RELAY_CONFIG_SECRET_ID'] }).then(
    (output) => JSON.parse((output as { SecretString: string }).SecretString) as FloorConfig,
  );
  return config;
}

/** The chat post: the alert's body as a message's text. */
export function postToChat(url: string, text: string): Promise<string> {
  return post(new URL(url), { 'content-type': 'application/json' }, JSON.stringify({ text }));
}

export const answer = (status: number) => ({ statusCode: status, body: JSON.stringify({ status }) });
