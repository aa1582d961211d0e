import { ReasonedError } from '../shared/errors.js';

/** Which platform operation failed, for logs and messages. */
export type CostApiCall =
  | 'token_generate'
  | 'payer_accounts'
  | 'cost_centers'
  | 'cost_centers_v1'
  | 'cost_and_usage'
  | 'event_create'
  | 'event_list'
  | 'event_delete';

export type CostApiFailure =
  /** Token generation refused the username and password. */
  | 'login_failed'
  /** A v2 call refused the key or token (401/403). */
  | 'unauthorized'
  /** Another 4xx: the platform says the request itself is wrong. */
  | 'rejected'
  | 'rate_limited'
  /** 5xx after the retries. */
  | 'platform_unavailable'
  | 'timeout'
  | 'network_error'
  /** The answer is not the documented shape. */
  | 'invalid_response'
  /** The platform answered with a redirect; it is not followed, since the request carries credentials. */
  | 'redirect_refused';

/** A platform call failed. Messages name the call and what went wrong, never keys, tokens or passwords. */
export class CostApiError extends ReasonedError<CostApiFailure> {
  constructor(
    message: string,
    reason: CostApiFailure,
    readonly call: CostApiCall,
    readonly status?: number,
  ) {
    super(message, reason);
  }
}

export const CALL_NAMES: Record<CostApiCall, string> = {
  token_generate: 'token generation (POST /api/v1/authentication/token/generate)',
  payer_accounts: 'the payer-accounts list (GET /api/v2/user-management/accounts/data-access/payer-accounts)',
  cost_centers: 'the cost-centers list (GET /api/v2/user-management/cost-centers/management/list)',
  cost_centers_v1: 'the older cost-centers list (GET /api/v1/users/cost-centers)',
  cost_and_usage: 'the daily cost and usage (GET /api/v2/invoices/cost-and-usage)',
  event_create: 'writing a cost event (POST /api/v1/users/events)',
  event_list: 'the cost events list (GET /api/v1/users/events)',
  event_delete: 'deleting a cost event (DELETE /api/v1/users/events/<uuid>)',
};
