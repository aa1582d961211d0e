import { parseJson, whereJsonFails } from '../shared/json.js';
import { jsonResponse } from './response.js';
import type { HttpRequest, HttpResponse } from './types.js';

export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The header a test delivery carries (`npm run send -- --test`) so that the relay posts it
 * without the destinations' mentions: a test pings no one unless its sender asks. It is no
 * credential: the delivery is authenticated like any other, and its sender can only make its
 * own alert quieter.
 */
export const TEST_DELIVERY_HEADER = 'x-cost-alert-relay-test';
export const QUIET_TEST = 'quiet';

/** Whether a request asks for a quiet test delivery (header names arrive in lower case). */
export const isQuietTest = (request: HttpRequest): boolean => request.headers[TEST_DELIVERY_HEADER]?.trim().toLowerCase() === QUIET_TEST;

export type BodyCheck = { ok: true; text: string } | { ok: false; response: HttpResponse };

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const [mediaType] = value.split(';');
  return JSON_MEDIA_TYPE.test(mediaType?.trim() ?? '');
}

function decodedLength(body: string, base64: boolean): number {
  if (!base64) return Buffer.byteLength(body, 'utf8');
  const padding = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.floor((body.length * 3) / 4) - padding;
}

/**
 * Checks method, size and content type before anything is authenticated or parsed,
 * so a refused request costs neither a secret read nor a JSON parse.
 */
export function readBody(request: HttpRequest, maxBytes = MAX_BODY_BYTES): BodyCheck {
  if (request.method.toUpperCase() !== 'POST') {
    return {
      ok: false,
      response: jsonResponse(405, { error: 'method_not_allowed', message: 'Only POST is accepted.' }, { allow: 'POST' }),
    };
  }
  const raw = request.body ?? '';
  if (decodedLength(raw, request.isBase64Encoded) > maxBytes) {
    return {
      ok: false,
      response: jsonResponse(413, {
        error: 'payload_too_large',
        message: `The body is larger than ${maxBytes} bytes.`,
      }),
    };
  }
  if (!isJsonContentType(request.headers['content-type'])) {
    return {
      ok: false,
      response: jsonResponse(415, {
        error: 'unsupported_media_type',
        message: 'Send the message as application/json.',
      }),
    };
  }
  const text = request.isBase64Encoded ? Buffer.from(raw, 'base64').toString('utf8') : raw;
  return { ok: true, text };
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; response: HttpResponse };

export async function parseJsonBody(text: string): Promise<JsonParse> {
  const json = parseJson(text);
  if (json.ok) return json;
  // Where and why, in our words: never the sender's text, which JSON.parse's own message may quote.
  const where = await whereJsonFails(text);
  return { ok: false, response: jsonResponse(400, { error: 'invalid_json', message: 'The body is not valid JSON.', ...where }) };
}
