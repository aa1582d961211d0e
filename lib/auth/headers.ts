import type { CustomHeader } from '../config/schema.js';
import { constantTimeEqual } from './constant-time.js';

/** Every configured header must be present with exactly its value; names ignore case. */
export function customHeadersMatch(headers: Record<string, string>, expected: readonly CustomHeader[]): boolean {
  let allMatch = true;
  for (const { key, value } of expected) {
    // Compare even when the header is absent so that timing does not reveal which one is missing.
    const matches = constantTimeEqual(headers[key.toLowerCase()] ?? '', value);
    allMatch = allMatch && matches;
  }
  return allMatch;
}
