import { credentialsSource, readPlatformCredentials } from '../api-key/credentials.js';
import { buildApiKey, toApiKeySecret } from '../api-key/procedure.js';
import { apiKeySelectionSchema, pendingApiKeySchema } from '../api-key/secret.js';
import { ApiKeyFormatError, parseApiKey } from '../cost-api/api-key.js';
import type { CostApiClient } from '../cost-api/client.js';
import { parseJson } from '../shared/json.js';
import { issueLines } from '../shared/zod-issues.js';
import { RotationError } from './errors.js';
import type { SecretRotator } from './steps.js';

function parseJsonObject(text: string, what: string, reason: string): Record<string, unknown> {
  const json = parseJson(text);
  if (!json.ok) throw new RotationError(`${what} is not valid JSON.`, reason);
  const value = json.value;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RotationError(`${what} is not a JSON object.`, reason);
  return value as Record<string, unknown>;
}

export interface ApiKeyRotatorDependencies {
  client: CostApiClient;
  credentialsSecretId: string;
  /** Reads the AWSCURRENT value of the credentials secret. */
  readSecret(secretId: string): Promise<string>;
  now?: () => Date;
}

/** The API-key secret of the contract: rebuilt with the spec 4.4 procedure, tested with a v2 call. */
export function apiKeyRotator(deps: ApiKeyRotatorDependencies): SecretRotator {
  const now = deps.now ?? (() => new Date());
  const source = credentialsSource(deps.credentialsSecretId);

  return {
    async create(current, log) {
      const written = parseJsonObject(current, 'The AWSCURRENT value of the API-key secret', 'selection_invalid');
      const selection = apiKeySelectionSchema.safeParse(written);
      if (!selection.success) {
        throw new RotationError(
          `The API-key secret's selection is invalid: ${issueLines(selection.error).join('; ')}.`,
          'selection_invalid',
        );
      }
      const result = await buildApiKey(
        deps.client,
        {
          credentials: await readPlatformCredentials(deps.readSecret, deps.credentialsSecretId),
          credentialsSource: source,
          account: selection.data.account,
          costCenter: selection.data.costCenter,
        },
        now,
      );
      log.info('new API key built', {
        accountKey: result.account.accountKey,
        accountName: result.account.accountName,
        costCenterId: result.costCenter?.id ?? '',
        expiresAt: result.expiresAt?.toISOString() ?? null,
      });
      return JSON.stringify(toApiKeySecret(written, result));
    },

    async test(pending) {
      const parsed = pendingApiKeySchema.safeParse(parseJsonObject(pending, 'The AWSPENDING value', 'pending_invalid'));
      if (!parsed.success) {
        throw new RotationError(`The AWSPENDING value is incomplete: ${issueLines(parsed.error).join('; ')}.`, 'pending_invalid');
      }
      try {
        parseApiKey(parsed.data.apikey);
      } catch (error) {
        if (error instanceof ApiKeyFormatError)
          throw new RotationError(`The AWSPENDING apikey is malformed: ${error.message}`, 'pending_invalid', { cause: error });
        throw error;
      }
      const expires = parsed.data.expiresAt ? Date.parse(parsed.data.expiresAt) : Number.NaN;
      if (!Number.isNaN(expires) && expires <= now().getTime()) {
        throw new RotationError('The AWSPENDING token has already expired.', 'token_expired');
      }
      await deps.client.listPayerAccounts({ apikey: parsed.data.apikey, authorization: parsed.data.authorization });
    },
  };
}
