export type JsonResult = { ok: true; value: unknown } | { ok: false };

/** JSON.parse that answers instead of throwing; what went wrong is the caller's to name. */
export function parseJson(text: string): JsonResult {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
