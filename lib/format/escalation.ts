import { withoutControls } from './fit.js';
import { inertText, singleLine, truncate } from './text.js';

/** The longest destination name an escalation line shows. */
const NAME_MAX = 100;

/** A wait as people say it: "45 min", "4 h", "1 h 30 min", "2 d", "1 d 6 h"; whole units, largest first, none that is zero. */
export function durationText(minutes: number): string {
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor(minutes / 60) % 24;
  const rest = minutes % 60;
  return [days && `${days} d`, hours && `${hours} h`, rest && `${rest} min`].filter(Boolean).join(' ');
}

/**
 * What an escalated message says first: "Not acknowledged at finops within 4 h". The name is the
 * operator's, yet made inert as sender text is; each kind still escapes it for its own syntax.
 */
export const escalationLine = ({ from, afterMinutes }: { from: string; afterMinutes: number }): string =>
  `Not acknowledged at ${truncate(singleLine(inertText(withoutControls(from))), NAME_MAX)} within ${durationText(afterMinutes)}`;
