// The relay as deployed, except that every chat service answers 200 in the same process: what
// the bench measures with it is the relay's own work per delivery (parsing, authentication,
// validation, formatting, log and metric lines), without a network round trip.
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { fromHttpApiEvent, toHttpApiResult } from '../lib/inbound/api-gateway.js';
import { createChatServices } from '../lib/notify/kinds.js';
import { createRelayFromEnvironment } from '../lib/relay/from-environment.js';
import { invocationBudget } from '../lib/shared/deadline.js';
import type { NodeFetch } from '../lib/transport/fetch-over-node-http.js';

const answered: NodeFetch = async (input) => ({
  ok: true,
  status: 200,
  statusText: 'OK',
  url: String(input),
  headers: { get: () => null, entries: () => [] },
  text: async () => 'ok',
  json: async () => 'ok',
  arrayBuffer: async () => new ArrayBuffer(0),
});

const relay = createRelayFromEnvironment(process.env, { services: createChatServices(answered) });

export const handler = async (event: APIGatewayProxyEventV2, context: Context) =>
  toHttpApiResult(await relay(fromHttpApiEvent(event, context.awsRequestId), invocationBudget(context)));
