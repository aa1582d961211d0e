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
