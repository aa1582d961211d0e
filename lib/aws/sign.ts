import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentials } from './credentials.js';

type SourceData = string | ArrayBuffer | ArrayBufferView;

const bytes = (data: SourceData) =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 and HMAC-SHA-256 for the signer, straight from node:crypto. */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(private readonly secret?: SourceData) {
    this.hash = this.fresh();
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.fresh();
  }
  private fresh(): Hash | Hmac {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
}

/** A request as the signer sees it; `headers` must already hold `host`. */
export interface RequestToSign {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string;
}

export interface SigningParameters {
  credentials: AwsCredentials;
  region: string;
  service: string;
  signingDate: Date;
}

// One signer per credentials and scope: it keeps the derived signing key, which changes once a
// day, so a warm call does not derive it again. Weak: refreshed credentials let old signers go.
const signers = new WeakMap<AwsCredentials, Map<string, SignatureV4>>();

function signerFor({ credentials, region, service }: SigningParameters): SignatureV4 {
  let byScope = signers.get(credentials);
  if (!byScope) {
    byScope = new Map();
    signers.set(credentials, byScope);
  }
  const scope = `${region}/${service}`;
  let signer = byScope.get(scope);
  if (!signer) {
    signer = new SignatureV4({ credentials, region, service, sha256: NodeSha256 });
    byScope.set(scope, signer);
  }
  return signer;
}

/**
 * Signature Version 4 with the SDK's own signer (@smithy/signature-v4), so that the
 * canonicalisation is exactly the SDK's; returns the headers to send, Authorization included.
 */
export async function signRequest(request: RequestToSign, parameters: SigningParameters): Promise<Record<string, string>> {
  const signer = signerFor(parameters);
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of request.url.searchParams) {
    const existing = query[name];
    query[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
  }
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: request.url.protocol,
      hostname: request.url.hostname,
      ...(request.url.port ? { port: Number(request.url.port) } : {}),
      path: request.url.pathname,
      query,
      headers: request.headers,
      body: request.body,
    },
    { signingDate: parameters.signingDate },
  );
  return signed.headers;
}

/** How far off AWS's clock a request must have been signed for the SDK to call its error clock skew, and try again. */
export const CLOCK_SKEW_CORRECTED_MS = 240_000;

/** The SDK ignores the Date of an answer that took longer than this: it says too little about AWS's clock. */
const MAX_SAMPLE_ROUND_TRIP_MS = 900_000;

/**
 * The clock offset after an answer, as the SDK's getUpdatedSystemClockOffset computes it: AWS's
 * time (the answer's `Date`) minus ours when the answer came. Unchanged when there is no
 * usable Date, when an `Age` header says a cache answered, or when the answer took too long.
 */
export function updatedClockOffset(headers: IncomingHttpHeaders, offsetMs: number, sentAt: number, receivedAt: number): number {
  const date = headers['date'];
  if (date === undefined || headers['age'] !== undefined) return offsetMs;
  const serverTime = Date.parse(date);
  if (Number.isNaN(serverTime) || receivedAt - sentAt > MAX_SAMPLE_ROUND_TRIP_MS) return offsetMs;
  return serverTime - receivedAt;
}
