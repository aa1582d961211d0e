import { describe, expect, it } from 'vitest';
import { relayConfigSchema } from '../../lib/config/schema.js';
import { selectDestinations } from '../../lib/routing/route.js';

const url = 'https://hooks.slack.com/services/T/B/X';
const config = relayConfigSchema.parse({
  auth: { method: 'none' },
  destinations: { default: { url }, 'finops-aws': { url }, security: { url }, prod: { url } },
  routes: [
    { when: { objectType: ['anomaly_alert'], cloudProvider: ['aws'] }, to: ['finops-aws'] },
    { when: { accountId: ['123456789012'] }, to: ['prod', 'finops-aws'] },
    { when: { objectType: ['anomaly_alert', 'budget_alert'] }, to: ['security'] },
  ],
});

describe('selectDestinations', () => {
  it('sends to every matching route once, matching cloud provider ignoring case', () => {
    expect(selectDestinations(config, { objectType: 'anomaly_alert', cloudProvider: 'AWS', accountId: '123456789012' })).toEqual([
      'finops-aws',
      'prod',
      'security',
    ]);
  });

  it('requires every listed condition of a route', () => {
    expect(selectDestinations(config, { objectType: 'anomaly_alert', cloudProvider: 'azure', accountId: '1' })).toEqual(['security']);
    expect(selectDestinations(config, { objectType: 'anomaly_alert', cloudProvider: undefined, accountId: undefined })).toEqual([
      'security',
    ]);
  });

  it('falls back to default when nothing matches, and a config without routes always uses default', () => {
    expect(selectDestinations(config, { objectType: 'recommendation_report', cloudProvider: 'gcp', accountId: '9' })).toEqual(['default']);
    const minimal = relayConfigSchema.parse({ auth: { method: 'none' }, destinations: { default: { url } } });
    expect(selectDestinations(minimal, { objectType: 'x', cloudProvider: undefined, accountId: undefined })).toEqual(['default']);
  });
});
