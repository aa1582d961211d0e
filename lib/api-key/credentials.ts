import * as z from 'zod/mini';
import '../validation/messages.js';
import type { AwsJsonCall } from '../aws/json-client.js';
import type { Credentials } from '../cost-api/client.js';
import { errorName, ReasonedError } from '../shared/errors.js';
import { parseJson } from '../shared/json.js';
import { issueLines } from '../shared/zod-issues.js';

/** The platform login secret's value: `{"username", "password"}`, as the stack writes it. */
export const platformCredentialsSchema = z.object({
  username: z.string().check(z.trim(), z.minLength(1)),
  password: z.string().check(z.minLength(1)),
});

/** The credentials secret cannot be read, or does not hold a login; the message names the secret, never its value. */
export class PlatformCredentialsError extends ReasonedError<'credentials_unavailable' | 'credentials_invalid'> {}

/** How the credentials secret is named in messages: its id and the variable that points at it. */
export const credentialsSource = (secretId: string): string => `the credentials secret "${secretId}" (COST_API_CREDENTIALS_SECRET_ID)`;

/**
 * Reads the platform login from the credentials secret, for every function that signs in
 * (the API-key rotation, directory-sync, the pictures and cost events), so that all say the
 * same about a bad secret.
 */
export async function readPlatformCredentials(readSecret: (secretId: string) => Promise<string>, secretId: string): Promise<Credentials> {
  const source = credentialsSource(secretId);
  let text: string;
  try {
    text = await readSecret(secretId);
  } catch (error) {
    // Our own errors say what failed in words; a foreign one (the SDK's, the network's) only by its class.
    const detail = error instanceof ReasonedError ? error.message : `(${errorName(error)})`;
    throw new PlatformCredentialsError(`Cannot read ${source}: ${detail}`, 'credentials_unavailable', { cause: error });
  }
  const json = parseJson(text);
  if (!json.ok) throw new PlatformCredentialsError(`The value of ${source} is not valid JSON.`, 'credentials_invalid');
  const value = json.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PlatformCredentialsError(`The value of ${source} is not a JSON object.`, 'credentials_invalid');
  }
  const parsed = platformCredentialsSchema.safeParse(value);
  if (!parsed.success) {
    throw new PlatformCredentialsError(
      `${source} must hold {"username","password"}: ${issueLines(parsed.error).join('; ')}.`,
      'credentials_invalid',
    );
  }
  return parsed.data;
}

/** A credentials secret that Secrets Manager holds as binary, not as the JSON string the stack writes. */
export class SecretValueMissingError extends ReasonedError<'no_secret_string'> {}

/** The platform login as a deployed function reads it: the credentials secret through Secrets Manager. */
export const platformCredentialsIn =
  (secrets: AwsJsonCall, secretId: string) =>
  (signal?: AbortSignal): Promise<Credentials> =>
    readPlatformCredentials(async (id) => {
      const { SecretString } = await secrets('GetSecretValue', { SecretId: id }, signal);
      if (typeof SecretString !== 'string') throw new SecretValueMissingError('it has no string value', 'no_secret_string');
      return SecretString;
    }, secretId);
