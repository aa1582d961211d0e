import { ReasonedError } from '../shared/errors.js';

/** The three segments of a platform API key (spec 2.1): `<user_key>:<account_key>:<cost_center_id>`. */
export interface ApiKeyParts {
  userKey: string;
  accountKey: string;
  /** Empty means all cost centers. */
  costCenterId: string;
}

/** The text is not an API key we can use; the message names the segment, never the text. */
export class ApiKeyFormatError extends ReasonedError<'invalid_key_segment'> {
  constructor(message: string) {
    super(message, 'invalid_key_segment');
  }
}

function checkSegment(name: string, value: string, required: boolean): void {
  if (required && value.length === 0) throw new ApiKeyFormatError(`The API key's ${name} is empty.`);
  if (value.includes(':')) throw new ApiKeyFormatError(`The API key's ${name} contains ":".`);
}

export function formatApiKey(parts: ApiKeyParts): string {
  checkSegment('user key', parts.userKey, true);
  checkSegment('account key', parts.accountKey, true);
  checkSegment('cost center id', parts.costCenterId, false);
  return `${parts.userKey}:${parts.accountKey}:${parts.costCenterId}`;
}

/** Parses an account-scoped key; the trailing colon (all cost centers) is required, as the spec writes it. */
export function parseApiKey(text: string): ApiKeyParts {
  const segments = text.split(':');
  if (segments.length !== 3) {
    throw new ApiKeyFormatError(`An API key has three ":"-separated segments; this one has ${segments.length}.`);
  }
  const [userKey = '', accountKey = '', costCenterId = ''] = segments;
  checkSegment('user key', userKey, true);
  checkSegment('account key', accountKey, true);
  return { userKey, accountKey, costCenterId };
}

/**
 * The user key from token generation's `apikey` (`<user_key>:-1:null`, older `<user_key>:-1`):
 * the first segment, whatever follows it, so a change of placeholder cannot corrupt it.
 */
export function userKeyOf(generatedApiKey: string): string {
  const userKey = generatedApiKey.split(':')[0] ?? '';
  if (userKey.trim().length === 0) throw new ApiKeyFormatError('The platform returned an API key without a user key.');
  return userKey;
}

/** For humans and logs: the user key hidden except its last four characters (only when it is long). */
export function maskApiKey(text: string): string {
  const colon = text.indexOf(':');
  const userKey = colon < 0 ? text : text.slice(0, colon);
  const rest = colon < 0 ? '' : text.slice(colon);
  const tail = userKey.length >= 16 ? userKey.slice(-4) : '';
  return `****${tail}${rest}`;
}
