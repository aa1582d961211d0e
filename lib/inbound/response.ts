import type { HttpResponse } from './types.js';

/** Every answer is JSON with at least `status`; callers pass only secret-free fields. */
export function jsonResponse(statusCode: number, fields: Record<string, unknown> = {}, headers: Record<string, string> = {}): HttpResponse {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
    body: JSON.stringify({ status: statusCode, ...fields }),
  };
}
