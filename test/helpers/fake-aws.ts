import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

/** One AWS JSON-protocol call as the fake received it. */
export interface AwsCall {
  target: string;
  path: string;
  body: Record<string, unknown>;
  /** As received: for checking what was signed. */
  method: string;
  headers: Record<string, string>;
  rawBody: string;
}

/** How the fake answers one target: a JSON body (status 200), an AWS error, or never. */
export type AwsAnswer =
  | Record<string, unknown>
  | { error: string; status?: number; fields?: Record<string, unknown>; errorHeader?: string }
  | { status: number; raw: string; headers?: Record<string, string> }
  | 'hang';

export interface FakeAws {
  url: string;
  calls: AwsCall[];
  answer(target: string, answer: AwsAnswer | ((call: AwsCall) => AwsAnswer)): void;
  /**
   * From now on the fake keeps a clock this far from the machine's: its answers carry it in
   * `Date`, and, as AWS, it refuses a request signed more than 5 minutes off it with
   * `InvalidSignatureException`. Undefined (the default): answers carry no `Date` at all, so
   * a client signing with a fixed test clock sees no skew.
   */
  clock(offsetMs: number | undefined): void;
  close(): Promise<void>;
}

/** How far from AWS's clock a signature may be; AWS refuses it beyond that. */
const SIGNATURE_WINDOW_MS = 5 * 60_000;

/** `20261123T102030Z` as milliseconds. */
const amzTime = (value: string) => Date.parse(value.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
const amzStamp = (time: number) => new Date(time).toISOString().replace(/[-:]|\.\d{3}/g, '');

/** AWS's answer to a request signed outside its window, in its words, or undefined when the signature's time is within it. */
function signatureTimeRefusal(signedAt: number, serverTime: number): string | undefined {
  const signed = amzStamp(signedAt);
  if (signedAt < serverTime - SIGNATURE_WINDOW_MS) {
    return `Signature expired: ${signed} is now earlier than ${amzStamp(serverTime - SIGNATURE_WINDOW_MS)} (${amzStamp(serverTime)} - 5 min.)`;
  }
  if (signedAt > serverTime + SIGNATURE_WINDOW_MS) {
    return `Signature not yet current: ${signed} is still later than ${amzStamp(serverTime + SIGNATURE_WINDOW_MS)} (${amzStamp(serverTime)} + 5 min.)`;
  }
  return undefined;
}

/**
 * A loopback stand-in for AWS services that speak the JSON protocol (Secrets Manager, SQS),
 * for in-process tests of our adapters: it records each call and answers as told. SQS
 * SendMessage answers carry the body's MD5, which the SDK checks.
 */
export async function startFakeAws(): Promise<FakeAws> {
  const calls: AwsCall[] = [];
  const answers = new Map<string, AwsAnswer | ((call: AwsCall) => AwsAnswer)>();
  const hanging = new Set<ServerResponse>();
  let clockOffsetMs: number | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const text = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]));
      const call: AwsCall = {
        target,
        path: req.url ?? '/',
        body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
        method: req.method ?? '',
        headers,
        rawBody: text,
      };
      calls.push(call);
      const contentType = { 'content-type': 'application/x-amz-json-1.0' };
      res.sendDate = false;
      if (clockOffsetMs !== undefined) {
        const serverTime = Date.now() + clockOffsetMs;
        res.setHeader('date', new Date(serverTime).toUTCString());
        const refusal = signatureTimeRefusal(amzTime(headers['x-amz-date'] ?? ''), serverTime);
        if (refusal) {
          res
            .writeHead(400, { ...contentType, 'x-amzn-errortype': 'InvalidSignatureException' })
            .end(JSON.stringify({ __type: 'InvalidSignatureException', message: refusal }));
          return;
        }
      }
      const configured = answers.get(target);
      const answer = typeof configured === 'function' ? configured(call) : (configured ?? defaultAnswer(call));
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if ('raw' in answer && typeof answer['raw'] === 'string') {
        res
          .writeHead(Number(answer['status']), { ...contentType, ...(answer['headers'] as Record<string, string> | undefined) })
          .end(answer['raw']);
        return;
      }
      if ('error' in answer && typeof answer['error'] === 'string') {
        const { fields = {}, errorHeader = answer['error'] } = answer as { fields?: Record<string, unknown>; errorHeader?: string };
        res
          .writeHead(Number(answer['status'] ?? 400), { ...contentType, ...(errorHeader ? { 'x-amzn-errortype': errorHeader } : {}) })
          .end(JSON.stringify({ __type: answer['error'], message: 'fake', ...fields }));
        return;
      }
      res.writeHead(200, contentType).end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    answer: (target, answer) => answers.set(target, answer),
    clock: (offsetMs) => {
      clockOffsetMs = offsetMs;
    },
    close: () => closeServer(server, hanging),
  };
}

function defaultAnswer(call: AwsCall): AwsAnswer {
  if (call.target === 'AmazonSQS.SendMessage') {
    const md5 = createHash('md5')
      .update(String(call.body['MessageBody'] ?? ''))
      .digest('hex');
    return { MessageId: 'm-1', MD5OfMessageBody: md5 };
  }
  return {};
}
