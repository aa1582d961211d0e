import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';

/** How long one AWS call may take: per attempt, and how many attempts. */
export interface AwsCallLimits {
  connectionTimeoutMs: number;
  requestTimeoutMs: number;
  maxAttempts: number;
}

/**
 * Secrets Manager is read on the delivery path, so its limits keep a failing read well
 * inside the relay's Lambda timeout (two attempts of at most 4 s each); the rotation, which
 * has minutes, passes more generous ones.
 */
export const SECRETS_MANAGER_READ_LIMITS: AwsCallLimits = { connectionTimeoutMs: 2_000, requestTimeoutMs: 4_000, maxAttempts: 2 };

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

export const SQS_LIMITS: AwsCallLimits = { connectionTimeoutMs: 2_000, requestTimeoutMs: 4_000, maxAttempts: 3 };

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

/** The dedup table sits before the first post: one attempt, answered in well under a second when DynamoDB is well. */
export const DYNAMODB_LIMITS: AwsCallLimits = { connectionTimeoutMs: 1_000, requestTimeoutMs: 1_000, maxAttempts: 2 };

type DynamoModule = typeof import('@aws-sdk/client-dynamodb');
export type LazyDynamo = () => Promise<{ client: DynamoDBClient; sdk: DynamoModule }>;

/** Loaded on first use, like SQS: local runs and stacks without a dedup table never pay for it. */
export function lazyDynamo(limits: AwsCallLimits = DYNAMODB_LIMITS): LazyDynamo {
  let loaded: ReturnType<LazyDynamo> | undefined;
  return () =>
    (loaded ??= import('@aws-sdk/client-dynamodb').then((sdk) => ({
      sdk,
      client: new sdk.DynamoDBClient({ maxAttempts: limits.maxAttempts, requestHandler: requestHandler(limits) }),
    })));
}
