// The floor: the least a relay can do per delivery with the same AWS SDK client and runtime.
// It reads the configuration secret once per container, parses it and posts with fetch; no
// authentication, validation, formatting or logging. What the real relay costs above this is
// the price of our own code.
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

interface FloorEvent {
  body?: string;
}

interface FloorConfig {
  destinations: { default: { url: string } };
}

const client = new SecretsManagerClient({});
let config: Promise<FloorConfig> | undefined;

export const handler = async (event: FloorEvent) => {
  config ??= client
    .send(new GetSecretValueCommand({ SecretId: process.env['RELAY_CONFIG_SECRET_ID'] }))
    .then((output) => JSON.parse(output.SecretString ?? '{}') as FloorConfig);
  const { destinations } = await config;
  const response = await fetch(destinations.default.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ text: event.body ?? '' }),
  });
  await response.text();
  return { statusCode: response.ok ? 200 : 502, body: JSON.stringify({ status: response.ok ? 200 : 502 }) };
};
