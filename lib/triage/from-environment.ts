import { awsJsonClient, DYNAMODB, SECRETS_MANAGER } from '../aws/json-client.js';
import { DYNAMODB_LIMITS, SECRETS_MANAGER_READ_LIMITS } from '../aws/limits.js';
import { configSourceFor, createRelayConfigStore } from '../config/store.js';
import { coldStartTracker, createLogger, type Logger, logLevelFrom } from '../log/logger.js';
import { metricsFromEnvironment } from '../metrics/emf.js';
import type { Metrics } from '../metrics/metrics.js';
import { destinationType } from '../notify/kinds.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { readEnvironment } from '../shared/environment.js';
import { ReasonedError } from '../shared/errors.js';
import { fetchOverNodeHttp, type NodeFetch } from '../transport/fetch-over-node-http.js';
import { triageKeyReader } from '../triage-link/key.js';
import { dynamoTriageStore } from './dynamodb.js';
import { triageEnvironmentSchema } from './environment.js';
import { followUpRequest, postFollowUp } from './follow-up.js';
import { createTriageHandler, type TriageAnswer, type TriagePorts, type TriageRequest } from './handle.js';
import { memoryTriageStore, type TriageStore } from './store.js';

/** Slack did not take chat.update. */
export class SlackUpdateRefusedError extends ReasonedError {}

export const DEFAULT_SLACK_API_URL = 'https://slack.com/api/';

export interface TriageWiringOptions {
  logger?: Logger;
  metrics?: Metrics;
  transport?: NodeFetch;
  /** Where triage state lives when no table is configured (npm start shares the relay's). */
  store?: TriageStore;
  /** A key given directly, for npm start; never read from the relay configuration. */
  tokenKey?: string;
  now?: () => number;
}

export type TriageFunction = (request: TriageRequest, budget: InvocationBudget, requestId?: string) => Promise<TriageAnswer>;

export function createTriageFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  options: TriageWiringOptions = {},
): TriageFunction {
  const log = options.logger ?? createLogger({ level: logLevelFrom(env) });
  const reading = readEnvironment(triageEnvironmentSchema, env);
  if (!reading.ok) {
    const variables = reading.problems.map((p) => p.path);
    return async () => {
      log.error('triage is misconfigured', { variables });
      return { statusCode: 503, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'Triage is misconfigured.' };
    };
  }
  const settings = reading.settings;
  const transport = options.transport ?? fetchOverNodeHttp;
  const now = options.now ?? Date.now;
  const slackApiUrl = settings.SLACK_API_URL ?? DEFAULT_SLACK_API_URL;
  const config = createRelayConfigStore({
    source: configSourceFor(settings.RELAY_CONFIG_SECRET_ID, log, false),
    ttlSeconds: 300,
    logger: log,
  });
  const secrets = awsJsonClient(SECRETS_MANAGER, { limits: SECRETS_MANAGER_READ_LIMITS });
  const readKey = settings.TRIAGE_KEY_SECRET_ID ? triageKeyReader(secrets, settings.TRIAGE_KEY_SECRET_ID) : undefined;
  const tokenKey = async (signal: AbortSignal) => options.tokenKey ?? readKey?.(signal);
  const store =
    options.store ??
    (settings.DEDUP_TABLE_NAME
      ? dynamoTriageStore(awsJsonClient(DYNAMODB, { limits: DYNAMODB_LIMITS }), settings.DEDUP_TABLE_NAME)
      : memoryTriageStore());
  const currentConfig = async () => (await config.current()).config;
  const ports: TriagePorts = {
    tokenKey,
    slackSigningSecret: async () => (await currentConfig()).slack?.signingSecret,
    store,
    async updateSlackMessage(opening, blocks, text, signal) {
      const botToken = (await currentConfig()).slack?.botToken;
      if (!botToken) return;
      const response = await transport(`${slackApiUrl.replace(/\/?$/, '/')}chat.update`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${botToken}` },
        body: JSON.stringify({ channel: opening.channel, ts: opening.ts, text, blocks }),
        redirect: 'error',
        signal,
      });
      const answer = await response.text();
      if (response.status >= 300 || !(JSON.parse(answer) as { ok?: boolean }).ok) {
        throw new SlackUpdateRefusedError('Slack did not update the message.', 'slack_update_refused');
      }
    },
    async destinationTypeOf(name) {
      const destination = (await currentConfig()).destinations[name];
      return destination && destinationType(destination);
    },
    async postFollowUp(token, text, signal) {
      const loaded = await currentConfig();
      const destination = loaded.destinations[token.d];
      if (!destination) return;
      const record = await store.read(token.a, signal);
      await postFollowUp(transport, followUpRequest(destination, token, text, record?.opening), {
        slackApiUrl,
        ...(loaded.slack?.botToken ? { botToken: loaded.slack.botToken } : {}),
        timeoutMs: 2_500,
      });
    },
    metrics: options.metrics ?? metricsFromEnvironment('triage', env),
    logger: log,
    now,
  };
  const coldStart = coldStartTracker();
  const handle = createTriageHandler(ports);
  return (request, budget, requestId) => {
    if (coldStart()) log.info('triage cold start', { requestId });
    return handle(request, budget);
  };
}
