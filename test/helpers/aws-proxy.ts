import { Agent, createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

/** What the proxy does with calls to one AWS JSON-protocol target, e.g. `secretsmanager.GetSecretValue`. */
export type Fault = 'hang' | 'fail';

export interface AwsProxy {
  /** Use as AWS_ENDPOINT_URL. */
  url: string;
  /** Requests seen for one `X-Amz-Target`. */
  count(target: string): number;
  /** The access key id each request was signed with, in order. */
  accessKeyIds(): string[];
  /** From now on, calls to `target` hang (accepted, never answered) or fail with a 500; undefined: forward again. */
  fault(target: string, fault: Fault | undefined): void;
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
  const faults = new Map<string, Fault>();
  const hanging = new Set<ServerResponse>();
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    const target = String(req.headers['x-amz-target'] ?? 'none');
    counts.set(target, (counts.get(target) ?? 0) + 1);
    keyIds.push(/Credential=([^/]+)\//.exec(String(req.headers['authorization'] ?? ''))?.[1] ?? '');
    const fault = faults.get(target);
    if (fault === 'hang') {
      hanging.add(res);
      req.resume();
      return;
    }
    if (fault === 'fail') {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ __type: 'InternalFailure', message: 'injected' }));
      return;
    }
    const forwarded = request(`${upstream}${req.url ?? '/'}`, { method: req.method, headers: req.headers, agent }, (answer) => {
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
    accessKeyIds: () => [...keyIds],
    fault: (target, fault) => {
      if (fault) faults.set(target, fault);
      else faults.delete(target);
    },
    reset: () => {
      counts.clear();
      keyIds.length = 0;
      faults.clear();
    },
    close: async () => {
      await closeServer(server, hanging);
      agent.destroy();
    },
  };
}
