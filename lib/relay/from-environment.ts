import { createAuthenticator } from '../auth/authenticate.js';
import { createRequestAuthenticator } from '../auth/request-authenticator.js';
import { lazySsoVerifier } from '../auth/sso-verifier.js';
import { lazySqs } from '../aws/clients.js';
import { DYNAMODB, SECRETS_MANAGER } from '../aws/json-client.js';
import { DYNAMODB_LIMITS, SECRETS_MANAGER_READ_LIMITS } from '../aws/limits.js';
import { type AwsPorts, jsonClientFor } from '../aws/ports.js';
import { configSourceFor, createRelayConfigStore } from '../config/store.js';
import { dynamoLedger } from '../dedup/dynamodb.js';
import type { DeliveryLedger } from '../dedup/ledger.js';
import { type AnomalyHeld, deliverOnce } from '../dedup/once.js';
import { createDelivery, type Delivery, postTimeoutFrom } from '../delivery/deliver.js';
import { createLogger, type Logger, logLevelFrom } from '../log/logger.js';
import { metricsFromEnvironment } from '../metrics/emf.js';
import { configurationUnavailableMetric, type Metrics, ownerDirectoryUnavailableMetric } from '../metrics/metrics.js';
import { type ChatServices, createChatServices, destinationType, groupWaitOf } from '../notify/kinds.js';
import type { OwnerDirectory } from '../owners/directory.js';
import type { OwnerLookup, OwnerLookupOptions } from '../owners/lazy-owners.js';
import { sqsDeadLetters, sqsRetryQueue } from '../queue/sqs.js';
import type { InvocationBudget } from '../shared/deadline.js';
import { readEnvironment } from '../shared/environment.js';
import { errorReason } from '../shared/errors.js';
import { sleep } from '../shared/sleep.js';
import { triageControls } from '../triage-link/controls.js';
import { configurationUnavailable } from './answer.js';
import { relayEnvironmentSchema } from './environment.js';
import { createRelay, type Relay } from './relay.js';

export interface WiringOptions {
  logger?: Logger;
  /** Where metrics go; EMF lines on stdout by default. */
  metrics?: Metrics;
  /** The clock for cache ages, grace periods and latencies; tests drive it instead of sleeping. */
  now?: () => number;
  /** The chat services; the real ones posting over node:http(s) by default. */
  services?: ChatServices;
  /** The ledger when no DEDUP_TABLE_NAME is set (`npm start` keeps one in memory); none by default. */
  ledger?: DeliveryLedger;
  /** Groups with an in-process timer (`npm start`); in AWS grouping needs the dedup table and the retry queue. */
  localGroups?: boolean;
  /** Escalations wait on an in-process timer (`npm start`); in AWS they need the dedup table and the retry queue. */
  localEscalations?: boolean;
  /** `npm start`: a triage link key made for the session, and the origin its links lead to (the local server). */
  triageKey?: string;
  origin?: string;
  /** The owner directory when no table holds it (`npm start` reads an owners file, and then names cost centers as OWNER_ROUTING does); none by default. */
  owners?: OwnerDirectory;
  /** Where AWS calls go; AWS itself by default (the simulation gives stand-ins). */
  aws?: AwsPorts;
}

/** Wires the relay with real clients from the Lambda environment; one instance per container. */
export function createRelayFromEnvironment(env: Record<string, string | undefined> = process.env, options: WiringOptions = {}): Relay {
  const reading = readEnvironment(relayEnvironmentSchema, env);
  const log = options.logger ?? createLogger({ level: logLevelFrom(env) });
  const metrics = options.metrics ?? metricsFromEnvironment('webhook-relay', env);
  if (!reading.ok) {
    const variables = reading.problems.map((p) => p.path);
    // A typo in a setting must not quietly become a default: refuse, and say which variable.
    return async (request) => {
      log.error('the relay environment is invalid', { requestId: request.requestId, variables });
      metrics.add(configurationUnavailableMetric());
      return configurationUnavailable();
    };
  }
  const settings = reading.settings;
  const now = options.now ?? Date.now;
  const store = createRelayConfigStore({
    source: configSourceFor(settings.RELAY_CONFIG_SECRET_ID, log, true, options.aws),
    ttlSeconds: settings.RELAY_CONFIG_TTL_SECONDS,
    logger: log,
    now,
  });
  const sqs = options.aws?.sqs ?? lazySqs();
  const triage = triageControls({
    keySecretId: settings.TRIAGE_KEY_SECRET_ID,
    key: options.triageKey,
    secrets: settings.TRIAGE_KEY_SECRET_ID ? jsonClientFor(SECRETS_MANAGER, SECRETS_MANAGER_READ_LIMITS, options.aws) : undefined,
    now,
  });
  const delivery = createDelivery({
    services: options.services ?? createChatServices(undefined, settings, options.aws),
    postTimeoutMs: postTimeoutFrom(settings),
    ...(settings.DELIVERY_QUEUE_URL ? { retryQueue: sqsRetryQueue(sqs, settings.DELIVERY_QUEUE_URL) } : {}),
    ...(settings.DEAD_LETTER_QUEUE_URL ? { deadLetters: sqsDeadLetters(sqs, settings.DEAD_LETTER_QUEUE_URL) } : {}),
    logger: log,
    metrics,
    now,
    sleep,
    triage,
  });
  const tableName = settings.DEDUP_TABLE_NAME;
  const dynamo = tableName ? jsonClientFor(DYNAMODB, DYNAMODB_LIMITS, options.aws) : undefined;
  const ledger =
    dynamo && tableName
      ? dynamoLedger(dynamo, {
          tableName,
          windowSeconds: settings.DEDUP_WINDOW_SECONDS,
          now,
        })
      : options.ledger;
  // Grouping's and escalations' code load with the first alert for a destination that has them, off the cold path.
  let grouping: Promise<typeof import('../group/lazy-relay.js')> | undefined;
  let escalations: Promise<typeof import('../escalation/lazy-escalation-relay.js')> | undefined;
  // `held` is declared below: `npm start`'s group timer tells it of the follow-ups it delivers.
  const wiring = { delivery, logger: log, metrics, now, settings, sqs, options, ledger, config: store, typeOf: destinationType, held };
  const first: Delivery['first'] = async (alert, budget) => {
    if (groupWaitOf(alert.target.destination) === undefined) return delivery.first(alert, budget);
    grouping ??= import('../group/lazy-relay.js');
    return (await grouping).groupedFirst(wiring, alert, budget);
  };
  // Called only for a destination with `escalate`, once the alert is posted and recorded: code
  // that cannot load costs the escalation's wait, never the alert (false: the re-send of the alert
  // sets it), and the next delivery loads it again.
  async function held(...post: Parameters<AnomalyHeld>): Promise<boolean> {
    try {
      escalations ??= import('../escalation/lazy-escalation-relay.js');
      return await (await escalations).watch(wiring, ...post);
    } catch (error) {
      escalations = undefined;
      log.error('escalation could not be scheduled', { destination: post[0].target.name, error: errorReason(error) });
      return false;
    }
  }
  // The owner directory's code loads with the first delivery that needs it: the stack keeps the
  // directory (OWNER_ROUTING), or the configuration routes by cost center.
  let lookup: Promise<OwnerLookup> | undefined;
  const ownerLookup =
    (where: Pick<OwnerLookupOptions, 'dynamo' | 'tableName' | 'directory'>) => async (accountId: string, budget: InvocationBudget) => {
      try {
        lookup ??= import('../owners/lazy-owners.js').then(({ createOwnerLookup }) =>
          createOwnerLookup({ ...where, ttlSeconds: settings.RELAY_CONFIG_TTL_SECONDS, now, logger: log, metrics, errorReason }),
        );
        return await (await lookup)(accountId, budget);
      } catch (error) {
        lookup = undefined;
        log.warn('owner directory unavailable; routing without cost centers', { reason: errorReason(error) });
        metrics.add(ownerDirectoryUnavailableMetric());
        return undefined;
      }
    };
  const relay = createRelay({
    config: store,
    authenticate: createRequestAuthenticator({
      // Creating the verifier costs nothing: its code loads, and the identity provider is first asked, with the first token.
      check: createAuthenticator(lazySsoVerifier({ keysLifetimeMs: settings.SSO_KEYS_MAX_AGE_SECONDS * 1000 })),
      store,
      graceMs: settings.RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS * 1000,
      now,
    }),
    first: ledger
      ? deliverOnce({
          ledger,
          delivery: { ...delivery, first },
          logger: log,
          metrics,
          now,
          held,
        })
      : first,
    ...(dynamo || options.owners
      ? { owners: ownerLookup({ dynamo, tableName: settings.DEDUP_TABLE_NAME, directory: options.owners }) }
      : {}),
    // `npm start` with an owners file plays a stack that keeps the directory.
    ownerRouting: settings.OWNER_ROUTING === 'Enabled' || options.owners !== undefined,
    logger: log,
    metrics,
    now,
  });
  // The link key is read beside the configuration and the table, not after them.
  return (request, budget) => {
    triage.prime();
    return relay(options.origin === undefined ? request : { ...request, origin: options.origin }, budget);
  };
}
