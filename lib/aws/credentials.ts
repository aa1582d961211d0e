/** Credentials for signing one request. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export type CredentialSource = () => Promise<AwsCredentials>;

/** Lambda puts the function role's credentials in the environment, valid for the container's life. */
export function environmentCredentials(env: Record<string, string | undefined>): AwsCredentials | undefined {
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = env['AWS_SESSION_TOKEN'];
  return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
}

/**
 * The SDK's default provider chain (profiles, SSO, web identity, container and instance
 * metadata), imported on first use: a Lambda container never loads it, a laptop or CI does.
 * It caches and refreshes what it finds by itself.
 */
export const sdkDefaultCredentials = (env: Record<string, string | undefined>): CredentialSource => {
  let provider: Promise<CredentialSource> | undefined;
  return async () => {
    provider ??= import('@aws-sdk/credential-provider-node').then(({ defaultProvider }) => {
      // The chain reads the profile name from process.env; honour the environment we were given.
      const profile = env['AWS_PROFILE'];
      return defaultProvider(profile ? { profile } : {});
    });
    return (await provider)();
  };
};

/** Lambda's environment credentials when they are there, else the SDK's chain. */
export function awsCredentials(
  env: Record<string, string | undefined>,
  fallback: (env: Record<string, string | undefined>) => CredentialSource = sdkDefaultCredentials,
): CredentialSource {
  const fromEnvironment = environmentCredentials(env);
  if (fromEnvironment) return async () => fromEnvironment;
  return fallback(env);
}
