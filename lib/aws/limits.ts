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

export const SQS_LIMITS: AwsCallLimits = { connectionTimeoutMs: 2_000, requestTimeoutMs: 4_000, maxAttempts: 3 };

/** The dedup table sits before the first post: answered in well under a second when DynamoDB is well. */
export const DYNAMODB_LIMITS: AwsCallLimits = { connectionTimeoutMs: 1_000, requestTimeoutMs: 1_000, maxAttempts: 2 };
