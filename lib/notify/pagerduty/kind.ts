import type { OtherKind } from '../kind.js';
import { endpointVariable } from '../options.js';
import { type PagerDutyDestination, pagerDutyDestinationSchema } from './config.js';
import { pagerDutyServices } from './service.js';

/** PagerDuty, through a service's Events API v2 integration: one alert per anomaly, triaged from the relay's page. */
export const pagerDutyKind = {
  type: 'pagerduty',
  label: 'PagerDuty',
  chat: false as const,
  summaries: false,
  readBy: 'people',
  schema: pagerDutyDestinationSchema,
  addressKeys: ['routingKey'],
  /** The Events API endpoint; the routing key travels there. */
  environment: { PAGERDUTY_EVENTS_URL: endpointVariable },
  addressOf: (destination) => destination.routingKey,
  services: pagerDutyServices,
  serviceKey: () => 'pagerduty',
  editsOpening: () => false,
  links: () => true,
  // A follow-up after Expected sends nothing, and the first after a snooze pages again (format.ts).
  followUpsReadTriage: true,
  extras: async () => (await import('./lazy-pagerduty-extras.js')).extras,
} satisfies OtherKind<PagerDutyDestination>;
