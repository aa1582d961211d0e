import type { BasicCredentials } from '../config/schema.js';
import { constantTimeEqual } from '../shared/constant-time.js';

export interface SuppliedCredentials {
  username: string;
  password: string;
}

/** Reads `Authorization: Basic <base64(user:password)>`; anything else is undefined. */
export function parseBasicAuthorization(header: string | undefined): SuppliedCredentials | undefined {
  const match = /^Basic[ ]+([A-Za-z0-9+/]+={0,2})[ ]*$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Both parts are always compared, so timing does not tell which one was wrong. */
export function basicCredentialsMatch(supplied: SuppliedCredentials, expected: BasicCredentials): boolean {
  const userMatches = constantTimeEqual(supplied.username, expected.username);
  const passwordMatches = constantTimeEqual(supplied.password, expected.password);
  return userMatches && passwordMatches;
}
