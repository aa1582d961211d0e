import * as z from 'zod/mini';
import '../../validation/messages.js';
import { chatGroupSchema, endpointSchema, mentionOf } from '../options.js';

// The only mentions an operator may configure; anything else could smuggle a link.
const SLACK_MENTION = /^<(?:!here|!channel|!subteam\^[A-Z0-9]+|@[UW][A-Z0-9]+)>$/;
// Public (C), private (G) channel or direct message (D) ids; a name could change under the relay.
const SLACK_CHANNEL_ID = /^[CGD][A-Z0-9]{6,}$/;

export const slackDestinationSchema = z
  .strictObject({
    type: z.optional(z.literal('slack')),
    /** An incoming webhook; a Slack destination has either this or `channel`. */
    url: z.optional(endpointSchema),
    /** A Slack channel id, posted to through the Web API with `slack.botToken` (a Slack app destination). */
    channel: z.optional(z.string().check(z.regex(SLACK_CHANNEL_ID, { message: 'must be a Slack channel id such as C0123ABCD' }))),
    mention: z.optional(
      mentionOf(
        (value): value is string => typeof value === 'string' && SLACK_MENTION.test(value),
        'one of <!here>, <!channel>, <!subteam^ID>, <@U...>',
        'Slack',
      ),
    ),
    group: z.optional(chatGroupSchema),
  })
  .check(
    z.superRefine((destination, ctx) => {
      if ((destination.url === undefined) === (destination.channel === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['url'], message: 'or "channel" is required, not both ("channel" only for Slack)' });
      }
    }),
  );
export type SlackDestination = z.infer<typeof slackDestinationSchema>;
