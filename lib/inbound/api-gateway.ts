import type { HttpRequest, HttpResponse } from './types.js';

/** The fields of an API Gateway HTTP API (payload 2.0) or Function URL event that the relay reads. */
export interface HttpApiEventLike {
  headers?: Record<string, string | undefined>;
  body?: string;
  isBase64Encoded?: boolean;
  requestContext?: { requestId?: string; domainName?: string; http?: { method?: string } };
}

/** API Gateway names its own host; anything that is not a plain host name gets no link. */
export const originOf = (domainName: string | undefined) =>
  domainName !== undefined && /^[A-Za-z0-9.-]{1,253}$/.test(domainName) ? { origin: `https://${domainName}` } : {};

export function fromHttpApiEvent(event: HttpApiEventLike, fallbackRequestId: string): HttpRequest {
  // Header names come from outside: defineProperty keeps `__proto__` an ordinary own key.
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined)
      Object.defineProperty(headers, name.toLowerCase(), { value, enumerable: true, writable: true, configurable: true });
  }
  return {
    method: event.requestContext?.http?.method ?? 'GET',
    headers,
    body: event.body,
    isBase64Encoded: event.isBase64Encoded === true,
    requestId: event.requestContext?.requestId ?? fallbackRequestId,
    ...originOf(event.requestContext?.domainName),
  };
}

export interface HttpApiResult {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
  isBase64Encoded: false;
}

export function toHttpApiResult(response: HttpResponse): HttpApiResult {
  return { ...response, isBase64Encoded: false };
}
