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

/** What a reviver is given beside the value since Node 22 (JSON.parse source text access). */
interface ReviverContext {
  source?: string;
}
const rawJSON = (JSON as { rawJSON?: (text: string) => unknown }).rawJSON;

/** A number as written, where the double it parses to would not write it again (a reviver). */
function asWritten(_key: string, value: unknown, context?: ReviverContext): unknown {
  const source = context?.source;
  if (typeof value !== 'number' || source === undefined || String(value) === source || !rawJSON) return value;
  return rawJSON(source);
}

/**
 * parseJson for a body that is passed on as data: a number that a double cannot hold as written
 * (digits beyond 2^53, `1.0`, `1e3`) stays as written, as a `JSON.rawJSON` that JSON.stringify
 * writes back unchanged. Slower than parseJson: only for what must go on exactly as received.
 */
export function parseJsonAsWritten(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text, asWritten) as unknown };
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

/** JSON with object keys sorted at every level, so the same content always gives the same text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
