import * as z from 'zod/mini';
import '../../validation/messages.js';

/** What PagerDuty makes of an event's severity (urgency rules, colours); `warning` unless configured. */
const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export type PagerDutySeverity = (typeof PAGERDUTY_SEVERITIES)[number];

// An Events API v2 integration key. The message names its form only, as the value is a secret.
const ROUTING_KEY = /^[A-Za-z0-9]{32}$/;

export const pagerDutyDestinationSchema = z.strictObject({
  // Never inferred from an address: a routing key says nothing of the kind it belongs to.
  type: z.literal('pagerduty'),
  /** The credential of a service's "Events API v2" integration: a secret. */
  routingKey: z.string().check(z.regex(ROUTING_KEY, { message: 'must be 32 letters and digits' })),
  severity: z.optional(z.enum(PAGERDUTY_SEVERITIES)),
});
export type PagerDutyDestination = z.infer<typeof pagerDutyDestinationSchema>;
