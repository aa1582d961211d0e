import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type AwsCallLimits, SECRETS_MANAGER_READ_LIMITS, SQS_LIMITS } from './limits.js';

// The SDK clients, for what is off the delivery's hot path: the rotation, SQS and the operator
// tools. The hot path's own calls (configuration read, dedup writes) go through json-client.ts.

// Without throwOnRequestTimeout the SDK's node:http handler only logs a warning when
// requestTimeout passes and keeps waiting for a server that accepted the connection.
const requestHandler = (limits: AwsCallLimits) => ({
  connectionTimeout: limits.connectionTimeoutMs,
  requestTimeout: limits.requestTimeoutMs,
  throwOnRequestTimeout: true,
});

/** The one Secrets Manager client factory; region and `AWS_ENDPOINT_URL` come from the environment as usual. */
export function createSecretsManagerClient(limits: AwsCallLimits = SECRETS_MANAGER_READ_LIMITS): SecretsManagerClient {
  return new SecretsManagerClient({ maxAttempts: limits.maxAttempts, requestHandler: requestHandler(limits) });
}

type SqsModule = typeof import('@aws-sdk/client-sqs');
export type LazySqs = () => Promise<{ client: SQSClient; sdk: SqsModule }>;

/**
 * The SQS client is loaded on first use: most deliveries never touch a queue, and the
 * client's module evaluation would otherwise add to every cold start.
 */
export function lazySqs(limits: AwsCallLimits = SQS_LIMITS): LazySqs {
  let loaded: ReturnType<LazySqs> | undefined;
  return () =>
    (loaded ??= import('@aws-sdk/client-sqs').then((sdk) => ({
      sdk,
      client: new sdk.SQSClient({ maxAttempts: limits.maxAttempts, requestHandler: requestHandler(limits) }),
    })));
}
