import { Agent, createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

/**
 * What the proxy does with calls to one AWS JSON-protocol target, e.g. `secretsmanager.GetSecretValue`:
 * hang (accepted, never answered), fail with a 500, or lose the answer (forwarded and carried
 * out upstream, then answered with a 500 as if the connection broke after the write).
 */
export type Fault = 'hang' | 'fail' | 'lose_answer';

export interface AwsProxy {
  /** Use as AWS_ENDPOINT_URL. */
  url: string;
  /** Requests seen for one `X-Amz-Target`. */
  count(target: string): number;
  /** Every `X-Amz-Target` seen, as IAM names the action: `dynamodb:UpdateItem`, `sqs:SendMessage`, … */
  actions(): string[];
  /** The access key id each request was signed with, in order. */
  accessKeyIds(): string[];
  /** The JSON bodies of the requests seen for one `X-Amz-Target`, in order: what a function sent (`AmazonSQS.SendMessage`). */
  sent(target: string): Array<Record<string, unknown>>;
  /** From now on (for `times` calls, or until changed), calls to `target` meet `fault`; undefined: forward again. */
  fault(target: string, fault: Fault | undefined, times?: number): void;
  reset(): void;
  close(): Promise<void>;
}

/**
 * Forwards every request to `upstream` (moto_server), counts them by target, and can make
 * chosen calls hang or fail: a dependency that accepts the connection and never answers.
 */
export async function startAwsProxy(upstream: string): Promise<AwsProxy> {
  const counts = new Map<string, number>();
  const keyIds: string[] = [];
  const bodies: Array<{ target: string; body: string }> = [];
  const faults = new Map<string, { fault: Fault; left: number }>();
  const hanging = new Set<ServerResponse>();
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    const target = String(req.headers['x-amz-target'] ?? 'none');
    counts.set(target, (counts.get(target) ?? 0) + 1);
    keyIds.push(/Credential=([^/]+)\//.exec(String(req.headers['authorization'] ?? ''))?.[1] ?? '');
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => bodies.push({ target, body: Buffer.concat(chunks).toString('utf8') }));
    const planned = faults.get(target);
    const fault = planned?.fault;
    if (planned && --planned.left <= 0) faults.delete(target);
    const internalFailure = () =>
      res
        .writeHead(500, { 'content-type': 'application/x-amz-json-1.1' })
        .end(JSON.stringify({ __type: 'InternalFailure', message: 'injected' }));
    if (fault === 'hang') {
      hanging.add(res);
      req.resume();
      return;
    }
    if (fault === 'fail') {
      req.resume();
      internalFailure();
      return;
    }
    const forwarded = request(`${upstream}${req.url ?? '/'}`, { method: req.method, headers: req.headers, agent }, (answer) => {
      if (fault === 'lose_answer') {
        answer.resume();
        answer.on('end', internalFailure);
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.writeHead(502).end());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: (target) => counts.get(target) ?? 0,
    actions: () =>
      [...counts.keys()]
        .filter((t) => t !== 'none')
        .map(iamAction)
        .sort(),
    accessKeyIds: () => [...keyIds],
    sent: (target) => bodies.filter((b) => b.target === target).map((b) => JSON.parse(b.body) as Record<string, unknown>),
    fault: (target, fault, times = Number.POSITIVE_INFINITY) => {
      if (fault) faults.set(target, { fault, left: times });
      else faults.delete(target);
    },
    reset: () => {
      counts.clear();
      keyIds.length = 0;
      bodies.length = 0;
      faults.clear();
    },
    close: async () => {
      await closeServer(server, hanging);
      agent.destroy();
    },
  };
}

// The JSON protocol's target prefixes, by the IAM service that grants them.
const IAM_SERVICES: ReadonlyArray<[RegExp, string]> = [
  [/^DynamoDB_\d+$/, 'dynamodb'],
  [/^secretsmanager$/, 'secretsmanager'],
  [/^AmazonSQS$/, 'sqs'],
  [/^AWSEvents$/, 'events'],
];

/** `DynamoDB_20120810.UpdateItem` as the action a role must grant: `dynamodb:UpdateItem`. */
export function iamAction(target: string): string {
  const [prefix = '', operation = ''] = target.split('.');
  const service = IAM_SERVICES.find(([pattern]) => pattern.test(prefix))?.[1] ?? prefix.toLowerCase();
  return `${service}:${operation}`;
}
