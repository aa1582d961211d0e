import { timingSafeEqual } from 'node:crypto';

/** The configured values as bytes, the same on every delivery; a few, so a small cache. */
const expectedBytes = new Map<string, Buffer>();
const MAX_EXPECTED = 32;

function bytesOf(expected: string): Buffer {
  let known = expectedBytes.get(expected);
  if (!known) {
    if (expectedBytes.size >= MAX_EXPECTED) expectedBytes.clear();
    known = Buffer.from(expected, 'utf8');
    expectedBytes.set(expected, known);
  }
  return known;
}

/**
 * Compares two strings in time that depends neither on where they differ nor on whether their
 * lengths do: a supplied value of another length is not compared at all, but the configured
 * value is compared with itself instead, the same work as a comparison of equal lengths. What
 * a caller can vary (the supplied value) tells it nothing about the secret. Plain bytes rather
 * than digests of both sides: a SHA-256 per comparison was the largest single cost of
 * authenticating a warm delivery.
 */
export function constantTimeEqual(supplied: string, expected: string): boolean {
  const want = bytesOf(expected);
  const got = Buffer.from(supplied, 'utf8');
  if (got.length === want.length) return timingSafeEqual(got, want);
  timingSafeEqual(want, want);
  return false;
}
