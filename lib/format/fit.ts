/** Bytes of the JSON the poster sends. */
export const jsonBytes = (payload: unknown): number => Buffer.byteLength(JSON.stringify(payload), 'utf8');

/**
 * Builds the payload with the longest body that keeps it within `maxBytes`. Character limits
 * alone cannot promise a byte size: one character may take up to three bytes in UTF-8.
 */
export function fitWithin<Payload>(maxBytes: number, bodyLimit: number, build: (bodyLimit: number) => Payload): Payload {
  let limit = bodyLimit;
  for (;;) {
    const payload = build(limit);
    const size = jsonBytes(payload);
    if (size <= maxBytes || limit === 0) return payload;
    limit = Math.max(0, Math.min(limit - 1, Math.floor((limit * maxBytes) / size) - 16));
  }
}

// C0 and C1 controls show as nothing or as boxes, yet JSON spells each as six bytes. Bidi
// controls show as nothing too, but reorder what follows them: `\u202E00.001$` reads `$100.00`.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is what it is for
const CONTROLS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\p{Bidi_Control}]/gu;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the same class, to test without replacing
const ANY_CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\p{Bidi_Control}]/u;

/** Removes control characters other than tab and newline (carriage returns go too), and bidi controls. */
export const withoutControls = (text: string): string => (ANY_CONTROL.test(text) ? text.replace(CONTROLS, '') : text);
