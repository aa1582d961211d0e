import type { LazySqs } from './clients.js';
import { type AwsJsonCall, type AwsJsonService, awsJsonClient } from './json-client.js';
import type { AwsCallLimits } from './limits.js';

/**
 * Where a function's AWS calls go: AWS itself (node:https, signed) unless the wiring is given
 * stand-ins, as the simulation gives each function its in-memory table, queues and secrets.
 */
export interface AwsPorts {
  /** A client for one AWS JSON-protocol service (DynamoDB, Secrets Manager, EventBridge). */
  json?(service: AwsJsonService): AwsJsonCall;
  /** The SQS client, loaded on first use. */
  sqs?: LazySqs;
}

/** A client for `service`: the port's when given, otherwise one to AWS with these limits. */
export const jsonClientFor = (service: AwsJsonService, limits: AwsCallLimits, ports?: AwsPorts): AwsJsonCall =>
  ports?.json?.(service) ?? awsJsonClient(service, { limits });
