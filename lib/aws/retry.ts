// The SDK's standard retry mode, for the calls we sign ourselves: the same errors are retried,
// with the same full-jitter backoff, so that both paths behave alike under a failing service.

const THROTTLING_CODES = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
const TRANSIENT_CODES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_STATUSES = new Set([500, 502, 503, 504]);
const NETWORK_ERROR_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND']);

const BASE_DELAY_MS = 100;
const THROTTLING_BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;

interface FailureShape {
  name?: unknown;
  code?: unknown;
  status?: unknown;
  clockSkewCorrected?: unknown;
  signatureExpired?: unknown;
}

export type RetryKind = 'throttling' | 'transient' | undefined;

/** Whether a failed attempt may succeed when tried again, and how long to back off for it. */
export function retryKind(error: unknown): RetryKind {
  const { name, code, status, clockSkewCorrected, signatureExpired } = (error ?? {}) as FailureShape;
  if (status === 429 || THROTTLING_CODES.has(String(name))) return 'throttling';
  // Signed with a clock AWS's answer has since corrected: the next attempt is signed right.
  if (clockSkewCorrected === true || (name === 'InvalidSignatureException' && signatureExpired === true)) return 'transient';
  if (TRANSIENT_CODES.has(String(name)) || TRANSIENT_STATUSES.has(Number(status)) || NETWORK_ERROR_CODES.has(String(code)))
    return 'transient';
  return undefined;
}

/** Full jitter: a random delay below base × 2^(retry − 1), capped. */
export function retryDelayMs(kind: Exclude<RetryKind, undefined>, retry: number, random: () => number = Math.random): number {
  const base = kind === 'throttling' ? THROTTLING_BASE_DELAY_MS : BASE_DELAY_MS;
  return Math.floor(Math.min(MAX_DELAY_MS, random() * 2 ** (retry - 1) * base));
}
