// The SDK floor: the configuration read with the AWS SDK's own Secrets Manager client, and the
// chat post with node:http(s) (not fetch, which loads undici). No authentication, validation,
// formatting or logging: what the relay costs above this is the price of our own code.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

interface FloorConfig {
  destinations: { default: { url: string } };
}

const client = new SecretsManagerClient({});
let config: Promise<FloorConfig> | undefined;

function postJson(url: URL, body: string): Promise<number> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

// The bench sets this to the relay's own formatted message for one more warm figure: the
// floor's cost when it posts what the relay posts (its Block Kit message, not the raw body).
const fixedMessage = process.env['BENCH_CHAT_MESSAGE'];
// Set for the floor's own work in process, the reference of the relay's (bench/README.md): the
// chat answers at once, as the in-process relay's chat services do.
const postInProcess = process.env['BENCH_POST_IN_PROCESS'] === '1';

export const handler = async (event: { body?: string }) => {
  config ??= client
    .send(new GetSecretValueCommand({ SecretId: process.env['RELAY_CONFIG_SECRET_ID'] }))
    .then((output) => JSON.parse(output.SecretString ?? '{}') as FloorConfig);
  const { destinations } = await config;
  const body = fixedMessage ?? JSON.stringify({ text: event.body ?? '' });
  const status = postInProcess ? 200 : await postJson(new URL(destinations.default.url), body);
  const ok = status >= 200 && status < 300;
  return { statusCode: ok ? 200 : 502, body: JSON.stringify({ status: ok ? 200 : 502 }) };
};
