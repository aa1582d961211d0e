// Invokes a deployed Lambda function and reads its answer: a signed POST to Lambda's Invoke API
// with the SDK's own signer and credential chain (lib/aws), rather than @aws-sdk/client-lambda,
// which the project would otherwise bundle nowhere and install for this one call.
import { awsCredentials } from '../lib/aws/credentials.js';
import { awsRegion } from '../lib/aws/endpoint.js';
import { signRequest } from '../lib/aws/sign.js';
import { parseJson } from '../lib/shared/json.js';
import { nodeRequest } from '../lib/transport/node-request.js';

/** What a function answered: its result, or that it failed (`functionError`, Lambda's `X-Amz-Function-Error`). */
export interface Invocation {
  result: unknown;
  functionError?: string;
}

/** Lambda refused the call itself (no such function, not allowed, throttled): its error type, never the payload. */
export class InvokeRefusedError extends Error {
  override name = 'InvokeRefusedError';
  constructor(
    readonly code: string,
    readonly status: number,
  ) {
    super(`Lambda refused the invocation: ${code} (HTTP ${status}).`);
  }
}

/** Where Lambda's API is: the SDK's endpoint settings for tests and emulators, else the region's own. */
export function lambdaEndpoint(region: string, env: Record<string, string | undefined>): string {
  const configured = env['AWS_ENDPOINT_URL_LAMBDA'] || env['AWS_ENDPOINT_URL'];
  if (configured) return configured.replace(/\/+$/, '');
  return `https://lambda.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** Invokes `functionName` with `payload` and waits for its answer (RequestResponse). */
export async function invokeFunction(
  functionName: string,
  payload: unknown,
  options: { region?: string | undefined; env?: Record<string, string | undefined>; timeoutMs?: number } = {},
): Promise<Invocation> {
  const env = { ...(options.env ?? process.env), ...(options.region ? { AWS_REGION: options.region } : {}) };
  const [region, credentials] = await Promise.all([awsRegion(env)(), awsCredentials(env)()]);
  const url = new URL(`${lambdaEndpoint(region, env)}/2015-03-31/functions/${encodeURIComponent(functionName)}/invocations`);
  const body = JSON.stringify(payload);
  const headers = await signRequest(
    { method: 'POST', url, headers: { host: url.host, 'content-type': 'application/json' }, body },
    { credentials, region, service: 'lambda', signingDate: new Date() },
  );
  const answer = await nodeRequest(url, {
    method: 'POST',
    headers,
    body,
    timeoutMs: options.timeoutMs ?? 120_000,
    maxAnswerBytes: 6 * 1024 * 1024,
  });
  const parsed = parseJson(answer.body.toString('utf8'));
  const value = parsed.ok ? parsed.value : undefined;
  if (answer.status < 200 || answer.status >= 300) {
    const header = answer.headers['x-amzn-errortype'];
    const type = typeof header === 'string' ? header : (value as { Type?: unknown; __type?: unknown } | undefined)?.__type;
    throw new InvokeRefusedError(String(type ?? 'UnknownError').split(':')[0] ?? 'UnknownError', answer.status);
  }
  const functionError = answer.headers['x-amz-function-error'];
  return { result: value, ...(typeof functionError === 'string' ? { functionError } : {}) };
}
