import type { OtherKind } from '../kind.js';
import { endpointVariable } from '../options.js';
import { type EventBridgeDestination, eventBridgeDestinationSchema } from './config.js';
import { eventBridgeService } from './service.js';

/** Amazon EventBridge: each alert an event on a bus, for rules to route to automation. */
export const eventBridgeKind = {
  type: 'eventbridge',
  label: 'EventBridge',
  chat: false as const,
  summaries: true,
  readBy: 'programs',
  schema: eventBridgeDestinationSchema,
  addressKeys: ['eventBus'],
  /** Where PutEvents goes instead of AWS (`npm start`'s console, a test's fake); unset: the AWS endpoint settings. */
  environment: { EVENTBRIDGE_ENDPOINT_URL: endpointVariable },
  addressOf: (destination) => destination.eventBus,
  services: ({ env, aws }) => ({ eventbridge: eventBridgeService(env, aws) }),
  serviceKey: () => 'eventbridge',
  editsOpening: () => false,
  links: () => true,
  // A rule may match any member the platform sends, known to the relay or not.
  passesOnReceived: true,
  extras: async () => (await import('./lazy-eventbridge-extras.js')).extras,
} satisfies OtherKind<EventBridgeDestination>;
