/**
 * The last second a date-time of four-digit years (ISO 8601 as RFC 3339 has it) can say: a later
 * one (a 12-digit epoch) is written `+033658-…`, which no `date-time` (PagerDuty's `timestamp`) takes.
 */
const LATEST_SECONDS = Date.UTC(9999, 11, 31, 23, 59, 59) / 1000;

/** Epoch seconds for the timestamp forms a sender plausibly uses, or undefined when unsure. */
export function parseTimestamp(value: string | undefined): number | undefined {
  const epoch = epochOf(value);
  return epoch !== undefined && epoch <= LATEST_SECONDS ? epoch : undefined;
}

function epochOf(value: string | undefined): number | undefined {
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

/**
 * One date format for any time zone, made once per zone: making an Intl.DateTimeFormat costs far
 * more than formatting with one, and a summary formats times per line on every try at fitting.
 */
export function zonedFormat(
  locale: string,
  options: Omit<Intl.DateTimeFormatOptions, 'timeZone'>,
): (timeZone: string) => Intl.DateTimeFormat {
  const made = new Map<string, Intl.DateTimeFormat>();
  return (timeZone) => {
    let format = made.get(timeZone);
    if (!format) {
      format = new Intl.DateTimeFormat(locale, { ...options, timeZone });
      made.set(timeZone, format);
    }
    return format;
  };
}
