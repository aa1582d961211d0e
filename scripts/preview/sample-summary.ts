// A made-up week for the preview page of `npm start`: every state a summary shows, so that each
// chat's layout can be seen before any real anomaly was sent. Never posted anywhere but to the
// console destinations of `npm start`.
import type { SummaryWeek } from '../../lib/format/summary.js';

const HOUR = 3_600;
const DAY = 24 * HOUR;

/** A week at `name` with open, acknowledged, expected and snoozed anomalies, ending now; its heading says it is a sample. */
export function sampleWeek(name: string, timeZone: string, nowSeconds: number): SummaryWeek {
  const account = 'Production payer (123456789012)';
  const production = { account, accountId: '123456789012', accountName: 'Production payer' };
  return {
    destination: `${name} (sample)`,
    from: nowSeconds - 7 * DAY,
    to: nowSeconds,
    asOf: nowSeconds,
    timeZone,
    counts: { open: 2, acknowledged: 1, expected: 1, snoozed: 1 },
    anomalies: [
      {
        id: 'anomaly#sample-ec2',
        title: 'Cost anomaly detected: Amazon EC2 in us-east-1',
        ...production,
        firstSeen: nowSeconds - 3 * DAY,
        updates: 2,
        state: 'open',
      },
      {
        id: 'anomaly#sample-s3',
        title: 'Cost anomaly detected: Amazon S3 in eu-west-1',
        ...production,
        firstSeen: nowSeconds - 5 * HOUR,
        updates: 0,
        state: 'open',
      },
      {
        id: 'anomaly#sample-rds',
        title: 'Cost anomaly detected: Amazon RDS in us-east-1',
        ...production,
        firstSeen: nowSeconds - 6 * DAY,
        updates: 1,
        state: 'acknowledged',
        by: 'Dana',
        at: nowSeconds - 5 * DAY,
      },
      {
        id: 'anomaly#sample-lambda',
        title: 'Cost anomaly detected: AWS Lambda in eu-central-1',
        account: 'Staging payer (210987654321)',
        accountId: '210987654321',
        accountName: 'Staging payer',
        firstSeen: nowSeconds - 4 * DAY,
        updates: 0,
        state: 'expected',
        by: 'Lee',
        at: nowSeconds - 4 * DAY + 2 * HOUR,
      },
      {
        id: 'anomaly#sample-cloudfront',
        title: 'Cost anomaly detected: Amazon CloudFront',
        ...production,
        firstSeen: nowSeconds - 2 * DAY,
        updates: 3,
        state: 'snoozed',
        by: 'Sam',
        at: nowSeconds - 10 * HOUR,
        until: nowSeconds + 14 * HOUR,
      },
    ],
  };
}
