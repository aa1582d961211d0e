import { describe, expect, it } from 'vitest';
import { isJsonContentType, MAX_BODY_BYTES, parseJsonBody, readBody } from '../../lib/inbound/request.js';
import type { HttpRequest } from '../../lib/inbound/types.js';

const request = (overrides: Partial<HttpRequest>): HttpRequest => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: '{}',
  isBase64Encoded: false,
  requestId: 'r',
  ...overrides,
});

describe('readBody', () => {
  it('accepts JSON content types with parameters and +json suffixes', () => {
    expect(isJsonContentType('application/json; charset=utf-8')).toBe(true);
    expect(isJsonContentType('Application/JSON')).toBe(true);
    expect(isJsonContentType('application/vnd.platform+json')).toBe(true);
    expect(isJsonContentType('text/plain')).toBe(false);
    expect(isJsonContentType('application/jsonp')).toBe(false);
    expect(isJsonContentType(undefined)).toBe(false);
  });

  it('decodes base64 bodies', () => {
    const result = readBody(request({ body: Buffer.from('{"a":"é"}').toString('base64'), isBase64Encoded: true }));
    expect(result).toEqual({ ok: true, text: '{"a":"é"}' });
  });

  it('counts bytes, not characters, against the limit, for plain and base64 bodies', () => {
    const exact = 'x'.repeat(MAX_BODY_BYTES);
    expect(readBody(request({ body: exact })).ok).toBe(true);
    expect(readBody(request({ body: Buffer.from(exact).toString('base64'), isBase64Encoded: true })).ok).toBe(true);
    const over = 'é'.repeat(MAX_BODY_BYTES / 2 + 1);
    const refused = readBody(request({ body: over }));
    expect(refused.ok).toBe(false);
    expect(!refused.ok && refused.response.statusCode).toBe(413);
    const refused64 = readBody(request({ body: Buffer.from(over).toString('base64'), isBase64Encoded: true }));
    expect(!refused64.ok && refused64.response.statusCode).toBe(413);
  });

  it('answers 405 with Allow for other methods', () => {
    const result = readBody(request({ method: 'GET' }));
    expect(!result.ok && result.response.statusCode).toBe(405);
    expect(!result.ok && result.response.headers['allow']).toBe('POST');
  });
});

describe('request headers from outside', () => {
  it('a header named __proto__ is an ordinary header, not the prototype', async () => {
    const { fromHttpApiEvent } = await import('../../lib/inbound/api-gateway.js');
    const request = fromHttpApiEvent({ headers: JSON.parse('{"__proto__":"x","Content-Type":"application/json"}') }, 'r');
    expect(Object.getPrototypeOf(request.headers)).toBe(Object.prototype);
    expect(Object.hasOwn(request.headers, '__proto__')).toBe(true);
    expect(request.headers['content-type']).toBe('application/json');
  });
});

describe('a body that is not JSON', () => {
  it("is answered 400 with where it goes wrong, in our words, never with the sender's text", async () => {
    const answer = await parseJsonBody('{"payload": {"title": "secret-title" "x"}}');
    expect(answer.ok).toBe(false);
    const body = JSON.parse((answer as { response: { body: string } }).response.body);
    expect(body).toEqual({
      status: 400,
      error: 'invalid_json',
      message: 'The body is not valid JSON.',
      line: 1,
      column: 38,
      problem: 'expected "," or "}" after a property value',
    });
    expect(JSON.stringify(body)).not.toContain('secret-title');
  });
});
