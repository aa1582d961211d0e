// Imported with import() by service.ts on the first post to an EventBridge destination, and
// bundled on its own (a lazy-*.ts module). The signed AWS client comes in as an argument: the
// cold path's own, not a second copy. What this module imports itself is pure code (the SDK's
// retry rules, Retry-After, the shared deadline), and errors are told apart by name, never by
// class, since a class here might be a copy of the one the cold path throws.
import type { AwsCredentials } from '../../aws/credentials.js';
import type { AwsJsonService, awsJsonClient } from '../../aws/json-client.js';
import type { AwsCallLimits } from '../../aws/limits.js';
import { retryKind } from '../../aws/retry.js';
import type { ChatService, PostOptions, PostOutcome } from '../../chat/service.js';
import { isoSeconds } from '../../format/alert.js';
import { escalationLine } from '../../format/escalation.js';
import { withDeadline } from '../../shared/deadline.js';
import { parseRetryAfterMs } from '../../shared/retry-after.js';
import type { KindEnvironment } from '../kind.js';

/** An event as the relay puts it on a bus: its detail-type names it, its detail is data for a rule and its targets. */
export interface EventBridgeEvent {
  detailType: 'Cost Alert' | 'Cost Alert Triage' | 'Cost Alert Summary';
  detail: Record<string, unknown>;
}

/**
 * What a post carries: an alert as the formatter was given it (message, destination, anomaly,
 * triage controls, context), whose event the poster builds off the cold path; or an event built
 * already (a triage note).
 */
export type EventBridgePost = { alert: Parameters<ChatService['format']> } | EventBridgeEvent;

/** Amazon EventBridge as the AWS JSON protocol reaches it: `AWSEvents.PutEvents`, signed for `events`. */
export const EVENTBRIDGE: AwsJsonService = {
  signingName: 'events',
  endpointId: 'EVENTBRIDGE',
  targetPrefix: 'AWSEvents',
  jsonVersion: '1.1',
  endpointRules: async () => (await import('@aws-sdk/client-eventbridge/dist-es/endpoint/bdd.js')).bdd,
};

/** Every event's `source`: what a rule matches the relay's events by. */
export const EVENT_SOURCE = 'cost-alert-relay';

/** PutEvents takes entries of at most 256 KB, counted as the UTF-8 bytes of their parts. */
export const MAX_ENTRY_BYTES = 256 * 1024;

// One attempt per post: the delivery core decides retries (and waits out a Retry-After), as for
// every other kind. The post's own deadline cuts the attempt shorter.
const LIMITS: AwsCallLimits = { connectionTimeoutMs: 2_000, requestTimeoutMs: 10_000, maxAttempts: 1 };

// An entry answered with these may be taken later; any other entry error needs a person.
const RETRYABLE_ENTRY_ERRORS = new Set(['ThrottlingException', 'InternalFailure']);

/**
 * What requests to a local endpoint are signed with when the environment has no credentials:
 * `npm start`'s console and a test's fake check no signature, and a laptop need not have an AWS profile.
 */
export const LOCAL_CREDENTIALS: AwsCredentials = { accessKeyId: 'AKIDLOCALEVENTBRIDGE', secretAccessKey: 'local-endpoint-only-not-aws' };
const LOCAL_REGION = 'us-east-1';

/** An AWS error code or our own reason as a reason: a plain word, never text from an answer. */
const word = (value: unknown): string | undefined => (typeof value === 'string' && /^[A-Za-z][\w.]{0,99}$/.test(value) ? value : undefined);

/** The entry's size as EventBridge counts it (the UTF-8 bytes of its parts), with the bus's name on top to be safe. */
export const entryBytes = (entry: Readonly<Record<string, string>>): number =>
  Object.values(entry).reduce((sum, part) => sum + Buffer.byteLength(part), 0);

/**
 * The event of an alert: its detail says where it went (the destination's name), which anomaly
 * and which update of it (marked with what someone decided, as every kind marks its follow-ups),
 * carries the metadata and payload as the relay received them (data for automation: nothing is
 * escaped or cut), the cost centers of its account, and the Triage link where there is one.
 */
export function alertEvent([message, , anomaly, triage, context]: Parameters<ChatService['format']>, nowMs: number): EventBridgeEvent {
  const followUp = anomaly?.kind === 'follow_up' ? anomaly : undefined;
  const mark = followUp?.triage;
  return {
    detailType: 'Cost Alert',
    detail: {
      destination: context?.destination,
      anomaly: {
        id: context?.anomalyId,
        update: followUp?.updates ?? 0,
        // An opening is first seen as it is posted; a follow-up carries the time the table kept.
        firstSeen: followUp?.firstSeenAt ?? isoSeconds(Math.floor(nowMs / 1000)),
        ...(mark ? { triage: { state: mark.state, by: mark.by, at: isoSeconds(mark.at) } } : {}),
      },
      // As the platform sent them: a rule may match a member the relay does not know.
      metadata: message.received?.metadata ?? message.metadata,
      payload: message.received?.payload ?? message.payload,
      // Where it waited unacknowledged: a rule may page on escalations alone.
      ...(context?.escalation
        ? {
            escalation: {
              from: context.escalation.from,
              afterMinutes: context.escalation.afterMinutes,
              line: escalationLine(context.escalation),
            },
          }
        : {}),
      // Where the owner directory knows them: a rule may route on an owner as the relay's routes do.
      ...(context?.costCenters?.length ? { costCenters: context.costCenters.map(({ id, name }) => ({ id, name })) } : {}),
      ...(triage && 'link' in triage ? { triageUrl: triage.link } : {}),
      ...(context?.chartUrl ? { chartUrl: context.chartUrl } : {}),
    },
  };
}

/**
 * A PutEvents answer: HTTP 200 may still carry a failed entry. `ThrottlingException` and
 * `InternalFailure` are worth another attempt; any other code is a refusal with that code as
 * its reason. The entry's `ErrorMessage` never becomes a reason: it is AWS's text, not a word.
 */
export function outcomeOfAnswer(answer: Record<string, unknown>): PostOutcome {
  const entries = Array.isArray(answer['Entries']) ? (answer['Entries'] as unknown[]) : [];
  const entry = (entries[0] ?? {}) as { EventId?: unknown; ErrorCode?: unknown };
  if (answer['FailedEntryCount'] === 0 && typeof entry.EventId === 'string') return { kind: 'delivered' };
  const code = word(entry.ErrorCode);
  if (code === undefined) return { kind: 'retryable', reason: 'unreadable_answer' };
  return RETRYABLE_ENTRY_ERRORS.has(code) ? { kind: 'retryable', reason: code } : { kind: 'refused', reason: code };
}

/** The post's deadline, by the name withDeadline gives its error's reason (`<name>_deadline`). */
const POST_DEADLINE = 'eventbridge';
const POST_DEADLINE_REASON = `${POST_DEADLINE}_deadline`;

interface Failure {
  name?: unknown;
  status?: unknown;
  retryAfter?: unknown;
  reason?: unknown;
}

/**
 * A call that did not return an answer's fields. An error answer from AWS (the client's
 * AwsServiceError: its code as `name`, the HTTP status) is retryable when it is throttling, a
 * 5xx or what the SDK's standard retry mode also tries again, with its Retry-After; any other is
 * refused with AWS's code (`AccessDeniedException`), or `http_<status>` when the answer named
 * none. Without an answer: a redirect is refused (the transport follows none); a timeout, a broken
 * connection and settings the function cannot use yet (no region, no credentials) are retryable.
 */
export function outcomeOfError(error: unknown): PostOutcome {
  const { name, status, retryAfter, reason } = (error ?? {}) as Failure;
  // Before the status: the transport's redirect error carries the redirect's.
  if (reason === 'redirect_refused') return { kind: 'refused', reason };
  if (typeof status === 'number') {
    // A 2xx whose body was no JSON object: the event may or may not be on the bus.
    if (status < 300) return { kind: 'retryable', reason: 'unreadable_answer' };
    const said = (name !== 'UnknownError' && word(name)) || `http_${status}`;
    if (status < 500 && status !== 408 && retryKind(error) === undefined) return { kind: 'refused', reason: said };
    const retryAfterMs = parseRetryAfterMs(typeof retryAfter === 'string' ? retryAfter : undefined);
    return { kind: 'retryable', reason: said, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  // Our transport's TimeoutError, and the post's deadline: withDeadline's error, known by its
  // reason (a bundle minifies class names), or the abort it signals.
  if (name === 'TimeoutError' || name === 'AbortError' || reason === POST_DEADLINE_REASON) return { kind: 'retryable', reason: 'timeout' };
  // Our own errors say what is missing (`region_missing`, `endpoint_unsupported`); the SDK's credential chain names its own.
  const ours = word(reason);
  if (ours) return { kind: 'retryable', reason: ours };
  return { kind: 'retryable', reason: name === 'CredentialsProviderError' ? 'credentials_unavailable' : 'network_error' };
}

export interface PosterOptions {
  env?: Record<string, string | undefined>;
  now?: () => number;
}

/**
 * Posts one event per post with the relay's signed AWS JSON client (`client`): the endpoint
 * rules, credentials and clock-skew correction of every other AWS call of the relay, within the
 * post's deadline (resolving credentials and the endpoint included).
 *
 * `settings` is the function's environment as read. Its EVENTBRIDGE_ENDPOINT_URL is where
 * PutEvents goes instead of the endpoint the AWS settings give. A plain-http one is on this
 * machine (the setting takes no other): `npm start`'s console or a test's fake, which check no
 * signature; requests to it are signed with the environment's credentials and region where there
 * are any, else with placeholders.
 */
export function createPoster(client: typeof awsJsonClient, settings: KindEnvironment | undefined, options: PosterOptions = {}) {
  const endpointUrl = settings?.['EVENTBRIDGE_ENDPOINT_URL'] as string | undefined;
  const now = options.now ?? Date.now;
  const base = options.env ?? process.env;
  // Our own setting: an SDK flag that ignores configured endpoints does not switch it off.
  const env =
    endpointUrl === undefined
      ? base
      : { ...base, AWS_ENDPOINT_URL_EVENTBRIDGE: endpointUrl, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: undefined };
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_SESSION_TOKEN: sessionToken } = env;
  const call = client(EVENTBRIDGE, {
    limits: LIMITS,
    env,
    ...(endpointUrl?.startsWith('http:')
      ? {
          credentials: async () =>
            accessKeyId && secretAccessKey
              ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
              : LOCAL_CREDENTIALS,
          region: async () => env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || LOCAL_REGION,
        }
      : {}),
  });

  return async (eventBus: string, post: EventBridgePost, postOptions: PostOptions): Promise<PostOutcome> => {
    const event = 'alert' in post ? alertEvent(post.alert, now()) : post;
    const entry = { Source: EVENT_SOURCE, DetailType: event.detailType, Detail: JSON.stringify(event.detail), EventBusName: eventBus };
    // The relay takes bodies far below this; should that change, an event too large is refused, never cut.
    if (entryBytes(entry) > MAX_ENTRY_BYTES) return { kind: 'refused', reason: 'event_too_large' };
    try {
      return outcomeOfAnswer(
        await withDeadline(POST_DEADLINE, postOptions.timeoutMs, (signal) => call('PutEvents', { Entries: [entry] }, signal)),
      );
    } catch (error) {
      return outcomeOfError(error);
    }
  };
}
