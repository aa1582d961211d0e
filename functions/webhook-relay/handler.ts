import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { fromHttpApiEvent, toHttpApiResult } from '../../lib/http/api-gateway.js';
import { createRelayFromEnvironment } from '../../lib/relay/from-environment.js';

// Built once per container: the configuration cache and clients live across invocations.
const relay = createRelayFromEnvironment();

export const handler = async (
  event: APIGatewayProxyEventV2,
  context: Context,
): Promise<APIGatewayProxyStructuredResultV2> => {
  const request = fromHttpApiEvent(event, context.awsRequestId);
  const response = await relay(request, { remainingTimeMs: () => context.getRemainingTimeInMillis() });
  return toHttpApiResult(response);
};
