import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import anomaly from '../../events/anomaly-alert.json' with { type: 'json' };
import { fromHttpApiEvent } from '../../lib/inbound/api-gateway.js';
import { createLogger } from '../../lib/log/logger.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, putSecret, secretsClient } from '../helpers/aws.js';
import { budgetOf } from '../helpers/budget.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const moto = motoUrl();

describe.skipIf(!moto)('a credential change takes effect without waiting for the configuration TTL', () => {
  let slack: FakeSlack;
  beforeAll(async () => {
    slack = await startFakeSlack();
    Object.assign(process.env, awsEnvironment(moto!));
  });
  afterAll(() => slack.close());

  it('re-reads the secret once after a refused request when the cached copy is over 30 s old', async () => {
    const client = secretsClient(moto!);
    const config = (password: string) => ({
      auth: { method: 'basic', basic: { username: 'relay', password } },
      destinations: { default: { url: slack.url() } },
    });
    const secretId = await createSecret(client, config('old-password-1'));
    let clock = 1_000_000;
    const lines: string[] = [];
    const relay = createRelayFromEnvironment(
      { RELAY_CONFIG_SECRET_ID: secretId, RELAY_CONFIG_TTL_SECONDS: '300', RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS: '0' },
      { now: () => clock, logger: createLogger({ sink: (l) => lines.push(l) }), metrics: memoryMetrics() },
    );
    const send = async (password: string) => {
      const request = fromHttpApiEvent(
        httpApiEvent({
          headers: { 'content-type': 'application/json', authorization: `Basic ${Buffer.from(`relay:${password}`).toString('base64')}` },
          body: JSON.stringify(anomaly),
        }),
        'test',
      );
      return (await relay(request, budgetOf(10_000))).statusCode;
    };

    expect(await send('old-password-1')).toBe(200);
    await putSecret(client, secretId, config('new-password-2'));

    clock += 10_000;
    // Cached copy is only 10 s old: a wrong password must not make every request re-read the secret.
    expect(await send('new-password-2')).toBe(401);
    expect(await send('old-password-1')).toBe(200);

    clock += 21_000;
    expect(await send('new-password-2')).toBe(200);
    expect(await send('old-password-1')).toBe(401);
    expect(lines.join('\n')).not.toMatch(/old-password-1|new-password-2/);
  });
});
