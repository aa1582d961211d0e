import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { AwsPorts } from '../lib/aws/ports.js';
import { createDirectorySyncFromEnvironment } from '../lib/directory/from-environment.js';
import { fromHttpApiEvent, originOf, toHttpApiResult } from '../lib/inbound/api-gateway.js';
import { createLogger } from '../lib/log/logger.js';
import { emfMetrics } from '../lib/metrics/emf.js';
import { createChatServices } from '../lib/notify/kinds.js';
import { createRelayFromEnvironment } from '../lib/relay/from-environment.js';
import { createRetryWorkerFromEnvironment } from '../lib/retry/from-environment.js';
import { invocationBudget } from '../lib/shared/deadline.js';
import { createSummaryFromEnvironment } from '../lib/summary/from-environment.js';
import type { NodeFetch } from '../lib/transport/fetch-over-node-http.js';
import { createTriageFromEnvironment } from '../lib/triage/from-environment.js';
import { httpApiEvent } from '../scripts/http-api-event.js';
import type { SimDeployment, SimFunction } from './deployment.js';
import type { Random } from './random.js';

/**
 * The five functions as their handlers wire them (functions/<name>/handler.ts), each container a
 * fresh wiring with the function's environment from template.yaml, and only the ports given
 * stand-ins: the AWS calls, the services' transport, the platform's fetch, stdout. A container
 * serves one invocation at a time; an idle one is reused, as Lambda does, or a new one starts.
 */

export interface Output {
  at: number;
  fn: FunctionName;
  line: string;
}

export type FunctionName = 'relay' | 'retry' | 'triage' | 'summary' | 'directory';

export interface Ports {
  aws: AwsPorts;
  transport: NodeFetch;
  platformFetch: typeof globalThis.fetch;
  now: () => number;
  random: Random;
  /** Every line a function writes (logs and EMF metrics), as CloudWatch would get it. */
  output: Output[];
}

/** An invocation that outlived its function's timeout: Lambda would have cut it off. */
export class InvocationTimedOutError extends Error {
  constructor(readonly fn: FunctionName) {
    super(`${fn} ran past its timeout`);
  }
}

interface Container<Handler> {
  handler: Handler;
  busy: boolean;
}

function pool<Handler>(
  name: FunctionName,
  spec: SimFunction,
  ports: Ports,
  make: (env: Record<string, string>, out: OutputSinks) => Handler,
) {
  const containers: Array<Container<Handler>> = [];
  return {
    containers,
    async invoke<T>(call: (handler: Handler, budget: ReturnType<typeof invocationBudget>) => Promise<T>): Promise<T> {
      // A warm container when one is idle (most of the time), else a cold start.
      let container = containers.find((c) => !c.busy && ports.random.chance(0.9));
      if (!container) {
        const sinks = outputSinks(name, ports);
        container = { handler: make(spec.env, sinks), busy: false };
        containers.push(container);
      }
      container.busy = true;
      const deadline = ports.now() + spec.timeoutMs;
      const budget = invocationBudget({ getRemainingTimeInMillis: () => deadline - ports.now() });
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new InvocationTimedOutError(name)), spec.timeoutMs);
      });
      try {
        return await Promise.race([call(container.handler, budget), timedOut]);
      } catch (error) {
        // A container whose invocation failed or timed out is not reused: Lambda replaces it.
        containers.splice(containers.indexOf(container), 1);
        throw error;
      } finally {
        clearTimeout(timer);
        container.busy = false;
      }
    },
  };
}

interface OutputSinks {
  log: (line: string) => void;
}

function outputSinks(fn: FunctionName, ports: Ports): OutputSinks {
  return { log: (line) => ports.output.push({ at: ports.now(), fn, line }) };
}

export interface HttpAnswer {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

export interface SimFunctions {
  relay(request: { headers: Record<string, string>; body: string; domain: string }): Promise<HttpAnswer>;
  triage(request: { method: string; path: string; headers: Record<string, string>; body: string; domain: string }): Promise<HttpAnswer>;
  retry(
    records: ReadonlyArray<{ messageId: string; receiptHandle: string; body: string; attributes: { ApproximateReceiveCount: string } }>,
  ): Promise<{
    batchItemFailures: Array<{ itemIdentifier: string }>;
  }>;
  summary(event: unknown): Promise<unknown>;
  directory(): Promise<{ outcome?: string } & Record<string, unknown>>;
}

const asAnswer = (result: APIGatewayProxyStructuredResultV2): HttpAnswer => ({
  statusCode: result.statusCode ?? 200,
  headers: Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k, String(v)])),
  body: typeof result.body === 'string' ? result.body : '',
});

export function deploy(deployment: SimDeployment, ports: Ports): SimFunctions {
  const logger = (sinks: OutputSinks, env: Record<string, string>) =>
    createLogger({ sink: sinks.log, level: env['LOG_LEVEL'] === 'debug' ? 'debug' : 'info' });
  const common = (fn: FunctionName, sinks: OutputSinks, env: Record<string, string>) => ({
    logger: logger(sinks, env),
    metrics: emfMetrics(fn, (line) => sinks.log(line.trimEnd()), ports.now),
    aws: ports.aws,
  });
  // The kinds post over the simulated services' fetch, and to AWS (EventBridge) through the AWS port.
  const services = (env: Record<string, string>) => createChatServices(ports.transport, env, ports.aws);

  const relays = pool('relay', deployment.relay, ports, (env, sinks) =>
    createRelayFromEnvironment(env, { ...common('relay', sinks, env), services: services(env) }),
  );
  const retries = pool('retry', deployment.retry, ports, (env, sinks) =>
    createRetryWorkerFromEnvironment(env, { ...common('retry', sinks, env), services: services(env) }),
  );
  const triages = pool('triage', deployment.triage, ports, (env, sinks) =>
    createTriageFromEnvironment(env, { ...common('triage', sinks, env), transport: ports.transport }),
  );
  const summaries = pool('summary', deployment.summary, ports, (env, sinks) =>
    createSummaryFromEnvironment(env, { ...common('summary', sinks, env), services: services(env) }),
  );
  const directories = pool('directory', deployment.directory, ports, (env, sinks) =>
    createDirectorySyncFromEnvironment(env, { ...common('directory', sinks, env), fetch: ports.platformFetch }),
  );

  let requests = 0;
  return {
    relay: (request) =>
      relays.invoke(async (relay, budget) => {
        const event = httpApiEvent({ method: 'POST', path: '/webhook', headers: request.headers, body: request.body });
        event.requestContext.domainName = request.domain;
        return asAnswer(toHttpApiResult(await relay(fromHttpApiEvent(event, `req-${++requests}`), budget)));
      }),
    triage: (request) =>
      triages.invoke(async (triage, budget) =>
        triage(
          { method: request.method, path: request.path, headers: request.headers, body: request.body, ...originOf(request.domain) },
          budget,
          `req-${++requests}`,
        ),
      ),
    retry: (records) => retries.invoke((worker, budget) => worker(records, budget, `req-${++requests}`)),
    summary: (event) => summaries.invoke((summary, budget) => summary(event, budget, `req-${++requests}`)),
    directory: () => directories.invoke((sync, budget) => sync(budget)) as never,
  };
}
