import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import anomaly from '../../events/anomaly-alert.json' with { type: 'json' };
import { outcomeWithoutAnswer, reasonWord } from '../../lib/chat/post-json.js';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { formatGoogleChatMessage } from '../../lib/notify/googlechat/format.js';
import { classifyGoogleChatAnswer, threadedUrl } from '../../lib/notify/googlechat/post.js';
import { googleChatService, spaceOf } from '../../lib/notify/googlechat/service.js';
import { formatTeamsMessage } from '../../lib/notify/teams/format.js';
import { classifyTeamsAnswer } from '../../lib/notify/teams/post.js';
import { teamsService } from '../../lib/notify/teams/service.js';
import { RedirectRefusedError } from '../../lib/transport/fetch-over-node-http.js';
import { type FakeChat, startFakeGoogleChat, startFakeTeams } from '../helpers/chat-servers.js';
import { closeServer } from '../helpers/loopback-server.js';

const message = webhookMessageSchema.parse(anomaly);
const answer = (status: number, body = '', retryAfter: string | null = null) => ({ status, body, retryAfter });
const teamsError = (code: string) => JSON.stringify({ error: { code, message: 'x' } });
const googleError = (code: number, status: string) => JSON.stringify({ error: { code, message: 'x', status } });

describe('what a Teams workflow answer means', () => {
  it.each([
    [answer(202), { kind: 'delivered' }],
    [answer(200), { kind: 'delivered' }],
    [
      answer(429, teamsError('WorkflowRequestsThrottled'), '7'),
      { kind: 'retryable', reason: 'workflow_requests_throttled', retryAfterMs: 7_000 },
    ],
    [answer(429, teamsError('WorkflowRequestsThrottled')), { kind: 'retryable', reason: 'workflow_requests_throttled' }],
    [answer(502, '<html>bad gateway</html>'), { kind: 'retryable', reason: 'http_502' }],
    [answer(408), { kind: 'retryable', reason: 'http_408' }],
    [answer(400, teamsError('WorkflowTriggerIsNotEnabled')), { kind: 'refused', reason: 'workflow_trigger_is_not_enabled' }],
    [answer(400, teamsError('InvalidRequestContent')), { kind: 'refused', reason: 'invalid_request_content' }],
    [answer(401, teamsError('DirectApiAuthorizationRequired')), { kind: 'refused', reason: 'direct_api_authorization_required' }],
    [answer(404, teamsError('WorkflowNotFound')), { kind: 'refused', reason: 'workflow_not_found' }],
    [answer(403, 'forbidden'), { kind: 'refused', reason: 'http_403' }],
    [answer(400, teamsError('<script>https://x</script>')), { kind: 'refused', reason: 'http_400' }],
  ])('%o → %o', (given, expected) => {
    expect(classifyTeamsAnswer(given)).toEqual(expected);
  });
});

describe('what a Google Chat answer means', () => {
  it.each([
    [answer(200, '{"name":"spaces/A/messages/B"}'), { kind: 'delivered' }],
    [answer(429, googleError(429, 'RESOURCE_EXHAUSTED')), { kind: 'retryable', reason: 'resource_exhausted' }],
    [answer(429, googleError(429, 'RESOURCE_EXHAUSTED'), '3'), { kind: 'retryable', reason: 'resource_exhausted', retryAfterMs: 3_000 }],
    [answer(503, googleError(503, 'UNAVAILABLE')), { kind: 'retryable', reason: 'unavailable' }],
    [answer(403, googleError(403, 'PERMISSION_DENIED')), { kind: 'refused', reason: 'permission_denied' }],
    [answer(400, googleError(400, 'INVALID_ARGUMENT')), { kind: 'refused', reason: 'invalid_argument' }],
    [answer(404, 'Not Found'), { kind: 'refused', reason: 'http_404' }],
  ])('%o → %o', (given, expected) => {
    expect(classifyGoogleChatAnswer(given)).toEqual(expected);
  });

  it('turns error codes into reason words, and nothing else', () => {
    expect(reasonWord('WorkflowNotFound')).toBe('workflow_not_found');
    expect(reasonWord('PERMISSION_DENIED')).toBe('permission_denied');
    expect(reasonWord('DirectApiInvalidAuthorizationSignature')).toBe('direct_api_invalid_authorization_signature');
    expect(reasonWord('has space')).toBeUndefined();
    expect(reasonWord(403)).toBeUndefined();
    expect(reasonWord('x'.repeat(65))).toBeUndefined();
  });

  it('adds the reply option to the query exactly as given, and paces by space, not by URL', () => {
    const url = 'https://chat.googleapis.com/v1/spaces/AAAA/messages?key=K&token=abc%3D';
    expect(threadedUrl(url)).toBe(`${url}&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD`);
    expect(threadedUrl(threadedUrl(url))).toBe(threadedUrl(url));
    expect(threadedUrl('http://127.0.0.1:9/v1/spaces/A/messages')).toBe(
      'http://127.0.0.1:9/v1/spaces/A/messages?messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD',
    );
    expect(spaceOf(url)).toBe(spaceOf('https://chat.googleapis.com/v1/spaces/AAAA/messages?key=K2&token=other'));
    expect(spaceOf(url)).not.toBe(spaceOf('https://chat.googleapis.com/v1/spaces/BBBB/messages?key=K&token=abc%3D'));
    expect(spaceOf(url)).not.toContain('token');
  });
});

describe('posting to loopback Teams and Google Chat webhooks', () => {
  let teams: FakeChat;
  let chat: FakeChat;
  let redirector: Server;
  let redirectUrl = '';
  const teamsPost = teamsService();
  const chatPost = googleChatService();
  const card = formatTeamsMessage(message);
  const chatMessage = formatGoogleChatMessage(message);

  beforeAll(async () => {
    [teams, chat] = await Promise.all([startFakeTeams(), startFakeGoogleChat()]);
    redirector = createServer((req, res) => {
      req.resume();
      res.writeHead(307, { location: teams.url() }).end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
    redirectUrl = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/workflows/x?sig=S`;
  });
  afterAll(async () => {
    await Promise.all([teams.close(), chat.close(), closeServer(redirector)]);
  });

  it('Teams: 202 is delivered; the card arrives whole as UTF-8 JSON', async () => {
    expect(await teamsPost.post(teams.url('/ok'), card, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    const received = teams.requests.at(-1)!;
    expect(received.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(received.body).toEqual(card);
    expect(received.query).toContain('sig=TEAMS-SIG-SECRET');
  });

  it('Teams: a flow turned off is refused, throttling is retryable with its Retry-After, a hung flow times out', async () => {
    teams.queue('/off', { kind: 'error', status: 400, code: 'WorkflowTriggerIsNotEnabled' });
    expect(await teamsPost.post(teams.url('/off'), card, { timeoutMs: 2_000 })).toEqual({
      kind: 'refused',
      reason: 'workflow_trigger_is_not_enabled',
    });
    teams.queue('/busy', { kind: 'throttled', retryAfterSeconds: 2 });
    expect(await teamsPost.post(teams.url('/busy'), card, { timeoutMs: 2_000 })).toEqual({
      kind: 'retryable',
      reason: 'workflow_requests_throttled',
      retryAfterMs: 2_000,
    });
    teams.queue('/hung', { kind: 'hang' });
    const started = Date.now();
    expect(await teamsPost.post(teams.url('/hung'), card, { timeoutMs: 300 })).toEqual({ kind: 'retryable', reason: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('Teams: a redirect is refused, and the URL it points to never sees the post', async () => {
    const before = teams.requests.length;
    expect(await teamsPost.post(redirectUrl, card, { timeoutMs: 2_000 })).toEqual({ kind: 'refused', reason: 'redirect_refused' });
    expect(teams.requests.length).toBe(before);
  });

  it('Google Chat: 200 is delivered; the query keeps its %3D and gains the reply option; the thread key travels', async () => {
    expect(await chatPost.post(chat.url(), chatMessage, { timeoutMs: 2_000 })).toEqual({ kind: 'delivered' });
    const received = chat.requests.at(-1)!;
    expect(received.query).toBe(
      '?key=GCHAT-KEY-SECRET&token=GCHAT-TOKEN-SECRET%3D&messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD',
    );
    expect((received.body as typeof chatMessage).thread.threadKey).toBe(chatMessage.thread.threadKey);
  });

  it('Google Chat: RESOURCE_EXHAUSTED is retryable (backoff without Retry-After), PERMISSION_DENIED refused', async () => {
    chat.queue('/v1/spaces/BUSY/messages', { kind: 'throttled' });
    expect(await chatPost.post(chat.url('/v1/spaces/BUSY/messages'), chatMessage, { timeoutMs: 2_000 })).toEqual({
      kind: 'retryable',
      reason: 'resource_exhausted',
    });
    chat.queue('/v1/spaces/GONE/messages', { kind: 'error', status: 403, code: 'PERMISSION_DENIED' });
    expect(await chatPost.post(chat.url('/v1/spaces/GONE/messages'), chatMessage, { timeoutMs: 2_000 })).toEqual({
      kind: 'refused',
      reason: 'permission_denied',
    });
  });

  it('a closed port is a network error, retryable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/v1/spaces/A/messages`;
    await closeServer(closed);
    expect(await chatPost.post(url, chatMessage, { timeoutMs: 1_000 })).toEqual({ kind: 'retryable', reason: 'network_error' });
  });
});

describe('a post that got no answer, whichever bundle threw', () => {
  // A lazily bundled poster (lazy-*.mjs) has its own copies of our error classes: the cold path's
  // reading must know a redirect and a timeout by what they say, not by which copy of a class they are.
  class CopiedRedirectRefusedError extends Error {
    readonly reason = 'redirect_refused';
  }

  it('a redirect refused by another copy of the transport is refused, not a network error to retry', () => {
    expect(outcomeWithoutAnswer(new CopiedRedirectRefusedError('Redirect refused (HTTP 302)'))).toEqual({
      kind: 'refused',
      reason: 'redirect_refused',
    });
    expect(outcomeWithoutAnswer(new RedirectRefusedError(307))).toEqual({ kind: 'refused', reason: 'redirect_refused' });
  });

  it('anything else without an answer may pass: a network error to retry', () => {
    expect(outcomeWithoutAnswer(new Error('socket hang up'))).toEqual({ kind: 'retryable', reason: 'network_error' });
  });
});
