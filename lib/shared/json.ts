import type { JsonSyntaxProblem } from './json-syntax.js';

export type JsonResult = { ok: true; value: unknown } | { ok: false };

/** JSON.parse that answers instead of throwing; what went wrong is the caller's to name (whereJsonFails). */
export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Where a text that JSON.parse refused first goes wrong (json-syntax.ts). The scanner loads only
 * then, so a cold start with good JSON never parses it.
 */
export async function whereJsonFails(text: string): Promise<JsonSyntaxProblem | undefined> {
  return (await import('./lazy-json-syntax.js')).jsonSyntaxError(text);
}
