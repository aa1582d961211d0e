// Routing by the platform's cost centers through the built relay on moto: the owner record that
// directory-sync writes sends an alert to its team; a missing or hung directory sends it to
// default in time, counted; a configuration without cost-center routes reads the directory only
// when the stack keeps one (OWNER_ROUTING), and then to name the cost centers.
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpApiEvent } from '../../scripts/http-api-event.js';
import { awsEnvironment, createSecret, motoUrl, secretsClient } from '../helpers/aws.js';
import { type AwsProxy, startAwsProxy } from '../helpers/aws-proxy.js';
import { type RunningBundle, startBundle } from '../helpers/bundle.js';
import { emfRecords } from '../helpers/memory-metrics.js';
import { createDedupTable } from '../helpers/relay-stack.js';
import { type FakeSlack, startFakeSlack } from '../helpers/slack-server.js';

const moto = motoUrl();
const GET_ITEM = 'DynamoDB_20120810.GetItem';
const ACCOUNT = '123456789012';
type Answer = { statusCode: number; body: string };

const alert = (title: string, account = ACCOUNT) =>
  httpApiEvent({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ metadata: { object_type: 'anomaly_alert' }, payload: { title, message: 'up 80%', account_id: account } }),
  });

describe.skipIf(!moto)('routes by cost center, through the built relay on moto', () => {
  let proxy: AwsProxy;
  let slack: FakeSlack;
  let table: Awaited<ReturnType<typeof createDedupTable>>;
  let routed: RunningBundle;
  let plain: RunningBundle;
  let named: RunningBundle;
  /** Every answer the bundles gave, searched for secrets at the end. */
  const answers: Answer[] = [];
  const invoke = async (bundle: RunningBundle, event: ReturnType<typeof alert>) => {
    const answer = await bundle.invoke<Answer>(event, { timeoutMs: 10_000 });
    answers.push(answer);
    return answer;
  };
  const hook = (name: string) => slack.url(`/services/T0/B0/${name}-HOOK-SECRET`);
  const postsTo = (name: string) => slack.accepted(`/services/T0/B0/${name}-HOOK-SECRET`);

  beforeAll(async () => {
    [proxy, slack, table] = await Promise.all([startAwsProxy(moto as string), startFakeSlack(), createDedupTable(moto as string)]);
    const destinations = { default: { url: hook('default') }, data: { url: hook('data') } };
    const secrets = secretsClient(moto as string);
    const [withRoutes, without] = await Promise.all([
      createSecret(secrets, {
        auth: { method: 'none' },
        destinations,
        routes: [{ when: { costCenter: ['Data Platform'] }, to: ['data'] }],
      }),
      createSecret(secrets, { auth: { method: 'none' }, destinations, routes: [{ when: { cloudProvider: ['aws'] }, to: ['data'] }] }),
    ]);
    await table.dynamo.send(
      new PutItemCommand({
        TableName: table.name,
        Item: {
          id: { S: `owner#${ACCOUNT}` },
          costCenters: { L: [{ M: { id: { S: 'cc-42' }, name: { S: 'Data Platform' } } }] },
          readAt: { N: String(Math.floor(Date.now() / 1000)) },
          expiresAt: { N: String(Math.floor(Date.now() / 1000) + 3 * 86_400) },
        },
      }),
    );
    const env = { ...awsEnvironment(proxy.url), DEDUP_TABLE_NAME: table.name };
    [routed, plain, named] = await Promise.all([
      startBundle('webhook-relay', { ...env, RELAY_CONFIG_SECRET_ID: withRoutes }),
      startBundle('webhook-relay', { ...env, RELAY_CONFIG_SECRET_ID: without }),
      // As the stack sets it with OwnerRouting Enabled.
      startBundle('webhook-relay', { ...env, RELAY_CONFIG_SECRET_ID: without, OWNER_ROUTING: 'Enabled' }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([routed?.stop(), plain?.stop(), named?.stop()]);
    await Promise.all([proxy?.close(), slack?.close()]);
  });

  it('reaches the team whose cost center covers the account, and names the cost center', async () => {
    const answer = await invoke(routed, alert('EC2 spend rose'));
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ delivered: ['data'] });
    expect(JSON.stringify(postsTo('data').at(-1)?.body)).toContain('Data Platform');
    expect(postsTo('default')).toHaveLength(0);
  });

  it('an account the directory does not know, and a directory that hangs, send the alert to default in time', async () => {
    const unknown = await invoke(routed, alert('S3 spend rose', '999999999999'));
    expect(JSON.parse(unknown.body)).toMatchObject({ delivered: ['default'] });
    proxy.fault(GET_ITEM, 'hang');
    try {
      const started = Date.now();
      // Another account: the one above is cached for the configuration's lifetime.
      const hung = await invoke(routed, alert('RDS spend rose', '888888888888'));
      expect(hung.statusCode).toBe(200);
      expect(JSON.parse(hung.body)).toMatchObject({ delivered: ['default'] });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(routed.output()).toContain('owner directory unavailable');
      // Counted, for the stack's owner-directory-unreadable alarm.
      expect(emfRecords(routed.output().split('\n'))).toContainEqual(
        expect.objectContaining({ service: 'webhook-relay', OwnerDirectoryUnavailable: 1 }),
      );
    } finally {
      proxy.fault(GET_ITEM, undefined);
    }
  });

  it('a configuration without cost-center routes reads no owner record', async () => {
    const before = proxy.count(GET_ITEM);
    const answer = await invoke(plain, alert('Lambda spend rose'));
    expect(answer.statusCode).toBe(200);
    expect(proxy.count(GET_ITEM)).toBe(before);
    const posted = JSON.stringify(postsTo('default').at(-1)?.body);
    expect(posted).toContain('Lambda spend rose');
    expect(posted).not.toContain('Data Platform');
  });

  it('with owner routing on, the same configuration reads the record and names the cost center in the message', async () => {
    const answer = await invoke(named, alert('EKS spend rose'));
    expect(JSON.parse(answer.body)).toMatchObject({ delivered: ['default'] });
    const posted = JSON.stringify(postsTo('default').at(-1)?.body);
    expect(posted).toContain('EKS spend rose');
    expect(posted).toContain('Data Platform');
  });

  it('no webhook secret in any log line or answer', () => {
    expect(answers.length).toBeGreaterThanOrEqual(5);
    const everything = [routed.output(), plain.output(), named.output(), JSON.stringify(answers)].join('\n');
    expect(everything).not.toContain('HOOK-SECRET');
  });
});
