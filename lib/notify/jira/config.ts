import * as z from 'zod/mini';
import '../../validation/messages.js';
import { endpointSchema } from '../options.js';

// Plain checks and short messages: this schema is on the relay's cold path.
const matching = (pattern: RegExp, message: string) => z.string().check(z.regex(pattern, { message }));
const nonEmpty = z.string().check(z.minLength(1));

/** A Jira Cloud project, where issues are created with an account's e-mail and API token. */
export const jiraDestinationSchema = z.strictObject({
  // Required: a Jira site is no webhook, so nothing about an address could say it is one.
  type: z.literal('jira'),
  /** `https://<name>.atlassian.net`: the REST API's paths are resolved against it. */
  site: endpointSchema,
  project: matching(/^[A-Z][A-Z0-9_]{1,9}$/, 'must be a project key such as FIN'),
  /** `Task` when left out. */
  issueType: z.optional(nonEmpty),
  /** The Jira account's e-mail address; a wrong one is Jira's 401 at the first post. */
  email: nonEmpty,
  /** The account's API token: a secret, sent only in the Basic authorization of posts to `site`. */
  apiToken: nonEmpty,
  labels: z.optional(z.array(matching(/^\S{1,255}$/, 'must have no spaces'))),
});
export type JiraDestination = z.infer<typeof jiraDestinationSchema>;
