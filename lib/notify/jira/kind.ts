import type { ChatService } from '../../chat/service.js';
import type { OtherKind } from '../kind.js';
import { type JiraDestination, jiraDestinationSchema } from './config.js';
import type { JiraPost } from './payload.js';

/** Jira Cloud: an issue per anomaly, a comment per follow-up and per triage action. */
export const jiraKind = {
  type: 'jira',
  label: 'Jira',
  chat: false as const,
  summaries: true,
  readBy: 'people',
  schema: jiraDestinationSchema,
  addressKeys: ['site'],
  environment: {},
  addressOf: (destination) => destination.site,
  // Formatting (issue fields and comments in ADF), the REST calls and their answers are in the
  // poster, imported on the first post: a configuration without a Jira destination never loads
  // them. `format` hands over what it was given, behind a function (payload.ts says why).
  services: ({ posting }) => ({
    jira: {
      format:
        (...alert) =>
        () =>
          alert,
      // The port's posting: the cold path's transport, and its reading of a post that got no answer.
      post: async (...post) => (await import('./lazy-jira-post.js')).postToJira(posting, ...post),
      // Jira Cloud limits each site by a cost it does not publish: a few posts a second stay clear of it.
      minIntervalMs: 250,
      paceKey: (site) => site,
    } satisfies ChatService<JiraPost, JiraDestination>,
  }),
  serviceKey: () => 'jira',
  // A follow-up comments on the opening's issue: while the issue is being created, it waits for its key.
  editsOpening: () => true,
  links: () => true,
  extras: async () => (await import('./lazy-jira-extras.js')).extras,
} satisfies OtherKind<JiraDestination>;
