import * as z from 'zod/mini';
import '../../validation/messages.js';
import { chatGroupSchema, endpointSchema } from '../options.js';

// Teams pings a user named in `msteams.entities` by UPN or Entra object id; the name is shown
// inside <at>…</at>, so it must not carry markup of its own.
const TEAMS_USER_ID = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[^\s@<>"]{1,64}@[^\s@<>"]{1,255})$/i;
const TEAMS_MENTION_NAME = /^[\p{L}\p{N} .,'-]{1,100}$/u;

export const within = (host: string, domain: string) => host === domain || host.endsWith(`.${domain}`);

/** Office 365 connector webhooks, which Microsoft retired in 2026: a post there reaches no one. */
export const isRetiredConnectorHost = (host: string) => within(host, 'webhook.office.com');

const hostOf = (url: string) => {
  try {
    return new URL(url).hostname.toLowerCase();
  } catch {
    return '';
  }
};

export const teamsMentionSchema = z.strictObject({
  id: z.string().check(z.regex(TEAMS_USER_ID, { message: "must be the user's UPN (name@example.com) or Entra object id" })),
  name: z.string().check(z.regex(TEAMS_MENTION_NAME, { message: "must be a display name of letters, digits, spaces and . , ' -" })),
});
export type TeamsMention = z.infer<typeof teamsMentionSchema>;

export const teamsDestinationSchema = z.strictObject({
  type: z.optional(z.literal('teams')),
  /** A Workflows webhook ("Post to a channel when a webhook request is received"). */
  url: endpointSchema.check(
    z.refine((url) => !isRetiredConnectorHost(hostOf(url)), {
      message:
        'is an Office 365 connector webhook, which Microsoft retired in 2026: create a Teams workflow webhook ("Post to a channel when a webhook request is received") and use its URL',
    }),
  ),
  mention: z.optional(
    z.pipe(
      z.custom<object>((value) => typeof value === 'object' && value !== null, {
        message: 'must be an object {"id": "<UPN or Entra object id>", "name": "<display name>"} for a Teams destination',
      }),
      teamsMentionSchema,
    ),
  ),
  group: z.optional(chatGroupSchema),
});
export type TeamsDestination = z.infer<typeof teamsDestinationSchema>;
