import * as z from 'zod/mini';
import '../validation/messages.js';
import { isHttpsOrLoopbackUrl } from '../transport/allowed-url.js';

/** https everywhere; plain http only towards this machine, for local use and tests. */
export const endpointSchema = z
  .string()
  .check(z.refine(isHttpsOrLoopbackUrl, { message: 'must be an https URL (plain http only for loopback hosts)' }));

/** An endpoint a function's environment points elsewhere (tests, local use); credentials travel there. */
export const endpointVariable = z.optional(z.string().check(z.trim(), z.refine(isHttpsOrLoopbackUrl, { message: 'must be an https URL' })));

// A refinement rather than zod's range checks, which would add their code to every cold start.
const isGroupWait = (seconds: number) => Number.isInteger(seconds) && seconds >= 10 && seconds <= 900;

/** Alerts arriving within the wait become one message (lib/group): for chat kinds only. */
export const chatGroupSchema = z.strictObject({
  waitSeconds: z.number().check(z.refine(isGroupWait, { message: 'must be 10 to 900 (seconds)' })),
});

/** A configured mention, checked against the forms a kind accepts: anything else could smuggle a link. */
export const mentionOf = <T>(fits: (value: unknown) => value is T, forms: string, label: string) =>
  z.custom<T>(fits, { message: `must be ${forms} for a ${label} destination` });

const isWholeIn = (low: number, high: number) => (n: number) => Number.isInteger(n) && n >= low && n <= high;

/** The weekdays a summary may fall on, as `Intl` names them in English (lower case). */
export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** A time zone the runtime knows by its IANA name; anything else would silently mean UTC. */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return name.length > 0;
  } catch {
    return false;
  }
}

/** An anomaly still open at the destination this long after it was first seen goes once to `to` (lib/escalation). */
const escalateSchema = z.strictObject({
  afterMinutes: z.number().check(z.refine(isWholeIn(1, 10080), { message: 'must be a whole number of minutes, 1 to 10080 (a week)' })),
  to: z.string().check(z.minLength(1)),
});

/** When the destination's weekly summary is posted, in its own time zone (lib/summary). */
const summarySchema = z.strictObject({
  weekday: z.enum(WEEKDAYS),
  hour: z.number().check(z.refine(isWholeIn(0, 23), { message: 'must be a whole hour, 0 to 23' })),
  timeZone: z._default(z.string().check(z.refine(isTimeZone, { message: 'must be an IANA time zone such as Europe/Berlin' })), 'UTC'),
});

/**
 * What any destination may add, whatever its kind: the configuration reads these before the
 * kind reads the rest, so a kind added later gets them without a line of its own.
 */
export const destinationOptionsSchema = z.strictObject({
  escalate: z.optional(escalateSchema),
  summary: z.optional(summarySchema),
});
export type DestinationOptions = z.infer<typeof destinationOptionsSchema>;
export type EscalateOptions = z.infer<typeof escalateSchema>;
export type SummaryOptions = z.infer<typeof summarySchema>;
export const DESTINATION_OPTION_KEYS = Object.keys(destinationOptionsSchema.shape) as ReadonlyArray<keyof DestinationOptions>;
