import { parseJson } from '../shared/json.js';
import { sleep as realSleep, type Sleep } from '../shared/sleep.js';
import { type NodeAnswer, nodeRequest } from '../transport/node-request.js';
import { awsCredentials, type CredentialSource } from './credentials.js';
import { type AwsService, awsEndpoint, awsRegion, type EndpointSettingsSource, endpointSettings, type RegionSource } from './endpoint.js';
import type { AwsCallLimits } from './limits.js';
import { retryDelayMs, retryKind } from './retry.js';
import { CLOCK_SKEW_CORRECTED_MS, signRequest, updatedClockOffset } from './sign.js';

/** A service that speaks the AWS JSON protocol: a POST to `/` naming the operation in `X-Amz-Target`. */
export interface AwsJsonService extends AwsService {
  targetPrefix: string;
  jsonVersion: '1.0' | '1.1';
}

export const SECRETS_MANAGER: AwsJsonService = {
  signingName: 'secretsmanager',
  endpointId: 'SECRETS_MANAGER',
  targetPrefix: 'secretsmanager',
  jsonVersion: '1.1',
  endpointRules: async () => (await import('@aws-sdk/client-secrets-manager/dist-es/endpoint/bdd.js')).bdd,
};

export const DYNAMODB: AwsJsonService = {
  signingName: 'dynamodb',
  endpointId: 'DYNAMODB',
  targetPrefix: 'DynamoDB_20120810',
  jsonVersion: '1.0',
  endpointRules: async () => (await import('@aws-sdk/client-dynamodb/dist-es/endpoint/bdd.js')).bdd,
};

/**
 * What AWS answered when it refused a call. Named by AWS's error code (as the SDK names its
 * exceptions), so `errorName()` gives `ResourceNotFoundException` on either path; `fields`
 * holds the rest of the answer (DynamoDB's `Item` on a failed condition), never its message.
 */
export class AwsServiceError extends Error {
  /**
   * The answer's clock showed this request was signed at least 4 minutes off AWS's, and the
   * client's clock offset now corrects that: the SDK's `$metadata.clockSkewCorrected`, which
   * makes the error worth one more attempt.
   */
  clockSkewCorrected = false;

  constructor(
    readonly code: string,
    readonly status: number,
    readonly fields: Record<string, unknown>,
    /** An `InvalidSignatureException` saying "Signature expired", which the SDK also tries again. */
    readonly signatureExpired = false,
    /** The answer's `Retry-After` header as sent, for a caller that retries on its own schedule (a post's delivery core). */
    readonly retryAfter?: string | string[],
  ) {
    super(`AWS refused the call: ${code} (HTTP ${status})`);
    this.name = code;
  }
}

/** A conditional write (or delete) whose condition did not hold: the answer carries the stored item. */
export const isConditionFailure = (error: unknown): error is AwsServiceError =>
  // By its shape too: a lazily imported module (`lazy-*.mjs`) is bundled with its own copy of the class.
  error instanceof Error &&
  (error as Partial<AwsServiceError>).code === 'ConditionalCheckFailedException' &&
  typeof (error as Partial<AwsServiceError>).fields === 'object';

/** One operation: input in, the answer's JSON out; rejects with AwsServiceError, a TimeoutError (node-request.ts) or a network error. */
export type AwsJsonCall = (operation: string, input: Record<string, unknown>, signal?: AbortSignal) => Promise<Record<string, unknown>>;

export interface AwsJsonClientOptions {
  limits: AwsCallLimits;
  env?: Record<string, string | undefined>;
  credentials?: CredentialSource;
  region?: RegionSource;
  /** FIPS and dual-stack; by default as the SDK reads them (environment, then profile). */
  endpointSettings?: EndpointSettingsSource;
  /** The local clock; requests are signed with it plus the offset AWS's answers showed. */
  now?: () => number;
  sleep?: Sleep;
  random?: () => number;
}

/** An answer may hold a 64 KiB secret, escaped; DynamoDB items are at most 400 KB. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * Calls an AWS JSON-protocol service over node:https, signed with the credentials Lambda
 * puts in the environment. It does what the SDK client would do for these few calls, at a
 * fraction of its cold start: the same endpoints (the SDK client's own endpoint rules) and
 * credential settings, per-attempt deadlines, the standard retry mode, the SDK's clock-skew
 * correction, and errors named by their AWS code.
 */
export function awsJsonClient(service: AwsJsonService, options: AwsJsonClientOptions): AwsJsonCall {
  const env = options.env ?? process.env;
  const credentials = options.credentials ?? awsCredentials(env);
  const endpoint = awsEndpoint(service, env, options.region ?? awsRegion(env), options.endpointSettings ?? endpointSettings(env));
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? realSleep;
  const { limits } = options;
  // AWS's clock minus ours, as the SDK client keeps it (its systemClockOffset): every answer's
  // Date sets it, and every request is signed with our clock plus it.
  let clockOffsetMs = 0;

  const attempt = async (operation: string, body: string, signal: AbortSignal | undefined): Promise<Record<string, unknown>> => {
    const [{ url, signingRegion, signingName }, resolvedCredentials] = await Promise.all([endpoint(), credentials()]);
    const offsetAtSigning = clockOffsetMs;
    const sentAt = now();
    const headers = await signRequest(
      {
        method: 'POST',
        url,
        headers: {
          host: url.host,
          'content-type': `application/x-amz-json-${service.jsonVersion}`,
          'x-amz-target': `${service.targetPrefix}.${operation}`,
        },
        body,
      },
      { credentials: resolvedCredentials, region: signingRegion, service: signingName, signingDate: new Date(sentAt + offsetAtSigning) },
    );
    const answer = await nodeRequest(url, {
      method: 'POST',
      headers,
      body,
      ...(signal ? { signal } : {}),
      connectionTimeoutMs: limits.connectionTimeoutMs,
      // One deadline for the whole attempt, as the SDK's requestTimeout with throwOnRequestTimeout.
      timeoutMs: limits.requestTimeoutMs,
      maxAnswerBytes: MAX_ANSWER_BYTES,
    });
    clockOffsetMs = updatedClockOffset(answer.headers, clockOffsetMs, sentAt, now());
    try {
      return parseAnswer(answer);
    } catch (error) {
      if (error instanceof AwsServiceError) error.clockSkewCorrected = Math.abs(clockOffsetMs - offsetAtSigning) >= CLOCK_SKEW_CORRECTED_MS;
      throw error;
    }
  };

  return async (operation, input, signal) => {
    const body = JSON.stringify(input);
    for (let attempts = 1; ; attempts++) {
      try {
        return await attempt(operation, body, signal);
      } catch (error) {
        const kind = retryKind(error);
        if (!kind || attempts >= limits.maxAttempts || signal?.aborted) throw error;
        await sleep(retryDelayMs(kind, attempts, options.random));
      }
    }
  };
}

function parseAnswer(answer: NodeAnswer): Record<string, unknown> {
  const text = answer.body.toString('utf8');
  const parsed = text.trim() === '' ? { ok: true as const, value: {} } : parseJson(text);
  const json = parsed.ok ? parsed.value : undefined;
  const fields = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
  if (answer.status >= 200 && answer.status < 300) {
    if (!fields) throw new AwsServiceError('InvalidAnswer', answer.status, {});
    return fields;
  }
  const { __type, message, Message, ...rest } = fields ?? {};
  const header = answer.headers['x-amzn-errortype'];
  const code = errorCode(typeof header === 'string' ? header : (__type ?? fields?.['code']));
  const said = message ?? Message;
  const signatureExpired = code === 'InvalidSignatureException' && typeof said === 'string' && said.includes('Signature expired');
  throw new AwsServiceError(code, answer.status, rest, signatureExpired, answer.headers['retry-after']);
}

/** `com.amazonaws.dynamodb.v20120810#ResourceNotFoundException` and `X:http://…` both mean `X`. */
function errorCode(raw: unknown): string {
  if (typeof raw !== 'string' || raw === '') return 'UnknownError';
  const withoutNamespace = raw.slice(raw.lastIndexOf('#') + 1);
  return withoutNamespace.split(':')[0] || 'UnknownError';
}
