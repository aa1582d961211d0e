import { randomUUID } from 'node:crypto';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface EventInput {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send the body base64-encoded, as API Gateway does for binary content types. */
  base64?: boolean;
  sourceIp?: string;
}

/** Builds an API Gateway HTTP API payload 2.0 event the way API Gateway does for `POST /webhook`. */
export function httpApiEvent(input: EventInput = {}): APIGatewayProxyEventV2 {
  const method = input.method ?? 'POST';
  const path = input.path ?? '/webhook';
  const now = new Date();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers ?? {})) {
    const key = name.toLowerCase();
    // API Gateway joins repeated headers with a comma.
    headers[key] = headers[key] === undefined ? value : `${headers[key]},${value}`;
  }
  const raw = input.body === undefined ? undefined : Buffer.isBuffer(input.body) ? input.body : Buffer.from(input.body, 'utf8');
  const base64 = input.base64 === true || (raw !== undefined && Buffer.isBuffer(input.body));
  const event: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: input.sourceIp ?? '127.0.0.1', userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: `${method} ${path}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: base64,
  };
  if (raw !== undefined) event.body = base64 ? raw.toString('base64') : raw.toString('utf8');
  return event;
}
