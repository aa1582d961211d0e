import { describe, expect, it } from 'vitest';
import { newJob } from '../../lib/delivery/job.js';
import { parseDeliveryJob } from '../../lib/delivery/job-schema.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';

const message = webhookMessageSchema.parse({
  metadata: { object_type: 'anomaly_alert' },
  payload: { title: 'EC2 spend up', account_id: '123' },
});
const job = newJob('req-1', 'finops', message, 'http_500', Date.parse('2026-11-22T00:00:00Z'));

describe('jobs on the retry queue', () => {
  it('round-trips a job the relay wrote', () => {
    expect(job).toMatchObject({
      version: 2,
      attempt: 1,
      destination: 'finops',
      lastReason: 'http_500',
      firstAttemptAt: '2026-11-22T00:00:00.000Z',
    });
    expect(parseDeliveryJob(JSON.stringify(job))).toEqual(job);
  });

  it('marks a quiet test delivery, and only that', () => {
    expect(job).not.toHaveProperty('quiet');
    const quiet = newJob('req-2', 'finops', message, 'http_500', 0, undefined, undefined, true);
    expect(parseDeliveryJob(JSON.stringify(quiet))).toEqual({ ...quiet, quiet: true });
  });

  it.each([
    ['not JSON', '{'],
    ['not an object', '"job"'],
    [
      'an old version-1 job with a formatted payload',
      JSON.stringify({ ...job, version: 1, message: undefined, payload: { text: 'x', blocks: [] } }),
    ],
    [
      'extra fields a sender added for Slack',
      JSON.stringify({ ...job, username: 'CEO', icon_url: 'https://evil.example/x.png', channel: '#general', link_names: 1 }),
    ],
    ['no destination', JSON.stringify({ ...job, destination: '' })],
    ['a negative attempt', JSON.stringify({ ...job, attempt: -1 })],
    ['a message that is not a webhook message', JSON.stringify({ ...job, message: { payload: {} } })],
    ['a quiet mark that is not true', JSON.stringify({ ...job, quiet: 'yes' })],
  ])('refuses %s', (_name, body) => {
    expect(parseDeliveryJob(body)).toBeUndefined();
  });

  it('drops fields inside the message that the webhook schema does not know', () => {
    const body = JSON.stringify({ ...job, message: { ...message, payload: { ...message.payload, blocks: [{ type: 'section' }] } } });
    expect(parseDeliveryJob(body)?.message.payload).not.toHaveProperty('blocks');
  });
});
