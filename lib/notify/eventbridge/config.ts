import * as z from 'zod/mini';
import '../../validation/messages.js';

// PutEvents' own pattern for EventBusName: a bus name, or a bus ARN in any partition.
const EVENT_BUS = /^(arn:aws[\w-]*:events:[\w-]+:\d{12}:event-bus\/)?[\w./-]{1,256}$/;

export const eventBridgeDestinationSchema = z.strictObject({
  // Never inferred: nothing in a bus name says it is one.
  type: z.literal('eventbridge'),
  /** The bus PutEvents sends to: `default`, a custom bus's name, or its ARN (another account's bus, by ARN only). */
  eventBus: z.string().check(z.regex(EVENT_BUS, { message: 'must be a bus name ("default") or ARN' })),
});
export type EventBridgeDestination = z.infer<typeof eventBridgeDestinationSchema>;
