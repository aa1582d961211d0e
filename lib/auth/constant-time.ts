import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Compares two strings in time that depends on neither where they differ nor the secret's
 * length: both sides are hashed to 32 bytes first, then compared with timingSafeEqual.
 */
export function constantTimeEqual(supplied: string, expected: string): boolean {
  return timingSafeEqual(digest(supplied), digest(expected));
}
