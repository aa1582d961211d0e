import type { ChatService, MessageRef } from '../../chat/service.js';
import type { AdfDoc } from './adf.js';
import type { JiraDestination } from './config.js';

/** What the service's `format` was called with: the alert, the destination, its place in its anomaly, its triage link. */
export type JiraAlert = Parameters<ChatService<unknown, JiraDestination>['format']>;

/** A triage note ("Acknowledged by …", untrusted text: the name) on the issue the table knows, if it knows one. */
export interface JiraNote {
  note: string;
  destination: JiraDestination;
  opening?: MessageRef | undefined;
}

/**
 * What the Jira service posts: an alert, which the lazily loaded poster formats, or a triage
 * note. It is behind a function, so that whatever serializes a payload by mistake (a log line,
 * a queue message) finds nothing in it, least of all the destination's API token.
 */
export type JiraPost = () => JiraAlert | JiraNote | JiraIssue;

/** An issue of the relay's own (a weekly summary): its summary line and, unless it is that line alone, a description. */
export interface JiraIssue {
  issue: { summary: string; description?: AdfDoc };
  destination: JiraDestination;
}
