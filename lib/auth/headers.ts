import type { CustomHeader } from '../config/schema.js';
import { constantTimeEqual } from '../shared/constant-time.js';

/** The value of a request header; names come from outside, so only own properties count. */
export function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const key = name.toLowerCase();
  return Object.hasOwn(headers, key) ? headers[key] : undefined;
}

/**
 * Every configured header must be present with exactly its value (names ignore case), or,
 * during the grace, with the previous version's value for that same header.
 */
export function customHeadersMatch(
  headers: Record<string, string>,
  expected: readonly CustomHeader[],
  previous: readonly CustomHeader[] = [],
): boolean {
  let allMatch = true;
  for (const { key, value } of expected) {
    // Compare even when the header is absent so that timing does not reveal which one is missing.
    const supplied = headerValue(headers, key) ?? '';
    const old = previous.find((p) => p.key.toLowerCase() === key.toLowerCase());
    const matches = constantTimeEqual(supplied, value) || (old !== undefined && constantTimeEqual(supplied, old.value));
    allMatch = allMatch && matches;
  }
  return allMatch;
}
