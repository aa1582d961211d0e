import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { originOf } from '../../lib/inbound/api-gateway.js';
import { invocationBudget } from '../../lib/shared/deadline.js';
import { createTriageFromEnvironment } from '../../lib/triage/from-environment.js';

// Built once per container, so the key and the configuration stay cached across clicks.
const triage = createTriageFromEnvironment();

export const handler = async (event: APIGatewayProxyEventV2, context: Context): Promise<APIGatewayProxyStructuredResultV2> => {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  const body = event.body === undefined ? '' : event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  return triage(
    { method: event.requestContext.http.method, path: event.rawPath, headers, body, ...originOf(event.requestContext.domainName) },
    invocationBudget(context),
    context.awsRequestId,
  );
};
