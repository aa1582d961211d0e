import { createAuthenticator } from '../auth/authenticate.js';
import { createSsoVerifier } from '../auth/sso/verify.js';
import { createRelayConfigCache } from '../config/relay-config-cache.js';
import { createLogger, type Logger } from '../log/logger.js';
import { lazySqs, sqsDeadLetterQueue, sqsRetryQueue } from '../queue/sqs.js';
import { createSlackPoster } from '../slack/post.js';
import { readRelayEnvironment } from './environment.js';
import { createRelay, type Relay } from './relay.js';

export interface WiringOptions {
  logger?: Logger;
  /** The clock for cache ages, grace periods and latencies; tests drive it instead of sleeping. */
  now?: () => number;
}

/** Wires the relay with real clients from the Lambda environment; one instance per container. */
export function createRelayFromEnvironment(
  env: Record<string, string | undefined> = process.env,
  options: WiringOptions = {},
): Relay {
  const { settings, problems } = readRelayEnvironment(env);
  const log = options.logger ?? createLogger({ level: settings.LOG_LEVEL });
  const now = options.now ?? Date.now;
  if (problems.length > 0) log.warn('ignoring invalid environment variables; using defaults', { variables: problems });

  const config = createRelayConfigCache({
    secretId: settings.RELAY_CONFIG_SECRET_ID,
    ttlSeconds: settings.RELAY_CONFIG_TTL_SECONDS,
    logger: log,
    now,
    readPrevious: true,
  });
  const sqs = lazySqs();
  return createRelay({
    ...(settings.DELIVERY_QUEUE_URL ? { retryQueue: sqsRetryQueue(sqs, settings.DELIVERY_QUEUE_URL) } : {}),
    ...(settings.DEAD_LETTER_QUEUE_URL ? { deadLetters: sqsDeadLetterQueue(sqs, settings.DEAD_LETTER_QUEUE_URL) } : {}),
    config,
    // Creating the verifier costs nothing: the identity provider is first asked with the first token.
    authenticate: createAuthenticator(createSsoVerifier()),
    post: createSlackPoster({ timeoutMs: settings.SLACK_TIMEOUT_MS }),
    postTimeoutMs: settings.SLACK_TIMEOUT_MS,
    previousCredentialsGraceMs: settings.RELAY_PREVIOUS_CREDENTIALS_GRACE_SECONDS * 1000,
    logger: log,
    now,
  });
}
