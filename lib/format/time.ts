/** Epoch seconds for the timestamp forms a sender plausibly uses, or undefined when unsure. */
export function parseTimestamp(value: string | undefined): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d{9,13}(?:\.\d+)?$/.test(text)) {
    const n = Number(text);
    return Math.floor(text.length >= 13 ? n / 1000 : n);
  }
  // Only forms that look like a calendar date: Date.parse alone accepts too much ("1", "May").
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return undefined;
  const ms = Date.parse(text.replace(' ', 'T'));
  // Slack's date token takes a non-negative epoch; anything earlier is shown as text.
  return Number.isNaN(ms) || ms < 0 ? undefined : Math.floor(ms / 1000);
}
