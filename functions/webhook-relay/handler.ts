import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { fromHttpApiEvent, toHttpApiResult } from '../../lib/inbound/api-gateway.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';
import { invocationBudget } from '../../lib/shared/deadline.js';

// Built once per container: the configuration cache and clients live across invocations.
const relay = createRelayFromEnvironment();

export const handler = async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> =>
  toHttpApiResult(await relay(fromHttpApiEvent(event, context.awsRequestId), invocationBudget(context)));
