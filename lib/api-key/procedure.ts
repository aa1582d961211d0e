import { formatApiKey } from '../cost-api/api-key.js';
import type { CostApiClient, Credentials } from '../cost-api/client.js';
import { CostApiError } from '../cost-api/errors.js';
import type { CostCenter, PayerAccount } from '../cost-api/schema.js';
import type { ApiKeySecretOutputs } from './secret.js';
import { selectAccount, selectCostCenter } from './select.js';
import { isoSeconds, tokenExpiry } from './token-expiry.js';

export interface ApiKeyRequest {
  credentials: Credentials;
  /** Where the credentials came from, for the message of a refused login (never their values). */
  credentialsSource: string;
  /** accountKey, cloud account id or account name. */
  account: string;
  /** Cost center id or name; empty for all cost centers. */
  costCenter: string;
}

export interface ApiKeyResult {
  apikey: string;
  authorization: string;
  account: PayerAccount;
  costCenter: CostCenter | undefined;
  issuedAt: Date;
  expiresAt: Date | null;
}

/** Spec 4.4: sign in, choose the account, optionally the cost center, and build the key. */
export async function buildApiKey(
  client: CostApiClient,
  request: ApiKeyRequest,
  now: () => Date = () => new Date(),
): Promise<ApiKeyResult> {
  let token: Awaited<ReturnType<CostApiClient['generateToken']>>;
  try {
    token = await client.generateToken(request.credentials);
  } catch (error) {
    if (error instanceof CostApiError && error.reason === 'login_failed') {
      throw new CostApiError(
        `The platform refused the username and password from ${request.credentialsSource}${error.status ? ` (HTTP ${error.status})` : ''}.`,
        'login_failed',
        error.call,
        error.status,
      );
    }
    throw error;
  }
  const issuedAt = now();
  const accounts = await client.listPayerAccounts({ apikey: token.apikey, authorization: token.authorization });
  const account = selectAccount(accounts, request.account);
  const accountKeyOnly = formatApiKey({ userKey: token.userKey, accountKey: account.accountKey, costCenterId: '' });

  let costCenter: CostCenter | undefined;
  if (request.costCenter.trim() !== '') {
    const costCenters = await client.listCostCenters({ apikey: accountKeyOnly, authorization: token.authorization });
    costCenter = selectCostCenter(costCenters, request.costCenter);
  }
  const apikey = costCenter
    ? formatApiKey({ userKey: token.userKey, accountKey: account.accountKey, costCenterId: costCenter.id })
    : accountKeyOnly;
  return { apikey, authorization: token.authorization, account, costCenter, issuedAt, expiresAt: tokenExpiry(token.authorization) };
}

/**
 * The contract's secret value: the operator's members (the selection and anything else) kept
 * exactly as written, so `"account": 12345` stays a number; the outputs replaced.
 */
export function toApiKeySecret(written: Record<string, unknown>, result: ApiKeyResult): Record<string, unknown> {
  const outputs: ApiKeySecretOutputs = {
    apikey: result.apikey,
    authorization: result.authorization,
    accountKey: result.account.accountKey,
    accountName: result.account.accountName,
    costCenterId: result.costCenter?.id ?? '',
    costCenterName: result.costCenter?.name ?? '',
    issuedAt: isoSeconds(result.issuedAt),
    expiresAt: result.expiresAt ? isoSeconds(result.expiresAt) : null,
  };
  return { ...written, costCenter: 'costCenter' in written ? written['costCenter'] : '', ...outputs };
}
