// Imported with import() by kind.ts on the first post to a Jira destination, and bundled on its
// own (a lazy-*.ts module). The transport and the reading of what it throws come from the port
// (KindSettings.posting): the cold path's own, whose errors are the ones thrown.
//
// Two REST calls over our transport (no redirect followed, one timer per request, the answer read
// within a cap) rather than Atlassian's client libraries (jira.js and the like): those are large,
// retry and follow redirects on their own, and the delivery core must decide both.
import type { Posting } from '../../chat/post-json.js';
import { type MessageRef, OPENING, type PostOptions, type PostOutcome } from '../../chat/service.js';
import { outcomeOfStatus } from '../../chat/status.js';
import { alertView } from '../../format/alert.js';
import type { AdfDoc } from './adf.js';
import type { JiraDestination } from './config.js';
import { alertDocument, DEFAULT_ISSUE_TYPE, issueFields, type JiraUpdate, noteDocument } from './format.js';
import type { JiraPost } from './payload.js';

// A project key, a dash and the issue's number: what an issue key is, and all a path may hold of it.
const ISSUE_KEY = /^[A-Z][A-Z0-9_]{1,9}-[1-9][0-9]{0,9}$/;

/**
 * Where an issue is, as the anomaly's state keeps it: the project and the issue key. Stored ids are
 * letters, digits, dots and dashes; a project key's underscores become dots (a key has none), and back.
 */
export const issueRef = (key: string): MessageRef => {
  const stored = key.replaceAll('_', '.');
  return { channel: stored.slice(0, stored.lastIndexOf('-')), ts: stored };
};

/** The issue key of a stored reference; undefined for anything that is not one. */
export const issueKeyOf = (ref: MessageRef | undefined): string | undefined => {
  const key = ref?.ts.replaceAll('.', '_');
  return key !== undefined && ISSUE_KEY.test(key) ? key : undefined;
};

/** The key of the issue an answer says was created; undefined when it names none we could use. */
function createdKey(body: string): string | undefined {
  try {
    const key = (JSON.parse(body) as { key?: unknown } | null)?.key;
    return typeof key === 'string' && ISSUE_KEY.test(key) ? key : undefined;
  } catch {
    return undefined;
  }
}

/** What Jira answered, reduced to what a decision needs; the body only where a created issue's key is read. */
interface Answer {
  status: number;
  body: string;
  retryAfter: string | null;
}

/**
 * Reduces a Jira answer to an outcome by the status rule every kind shares (201 delivered), with
 * the status alone as the reason: a 400's `errors` object names the fields Jira refused in its own
 * words, which stay out of reasons.
 */
export function classifyJiraAnswer({ status, retryAfter }: Answer): PostOutcome {
  return outcomeOfStatus(status, `http_${status}`, retryAfter);
}

/**
 * Where a site's REST API is: below the site's path (a console destination has one), without a
 * query, fragment or credentials the URL may have carried (the account signs in with its token).
 */
export function restApi(site: string): URL {
  const url = new URL(site);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/rest/api/3/`;
  url.search = '';
  url.hash = '';
  url.username = '';
  url.password = '';
  return url;
}

const basic = ({ email, apiToken }: JiraDestination) => `Basic ${Buffer.from(`${email}:${apiToken}`, 'utf8').toString('base64')}`;

/**
 * Posts to a Jira Cloud site with the account's e-mail and API token (HTTP Basic). An opening
 * creates an issue and answers where it is; a follow-up comments on it, or, when its issue is
 * unknown or gone, creates a new one that says it is an update, so the follow-up is never lost.
 * A triage note comments on the issue the table knows, and is refused without one.
 */
export async function postToJira(
  { transport, withoutAnswer }: Pick<Posting, 'transport' | 'withoutAnswer'>,
  site: string,
  payload: JiraPost,
  options: PostOptions,
): Promise<PostOutcome> {
  const post = payload();
  const destination = Array.isArray(post) ? post[1] : post.destination;
  const api = restApi(site);
  const authorization = basic(destination);
  // The calls of one post (a comment, then perhaps a new issue) share its one deadline.
  const end = performance.now() + options.timeoutMs;
  const left = () => Math.max(1, Math.floor(end - performance.now()));

  async function call(path: string, body: unknown): Promise<Answer | PostOutcome> {
    try {
      const response = await transport(new URL(path, api), {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', accept: 'application/json', authorization },
        body: JSON.stringify(body),
        redirect: 'error',
        timeoutMs: left(),
      });
      return { status: response.status, body: await response.text(), retryAfter: response.headers.get('retry-after') };
    } catch (error) {
      return withoutAnswer(error);
    }
  }
  const outcomeOf = (answer: Answer | PostOutcome) => ('kind' in answer ? answer : classifyJiraAnswer(answer));

  const comment = (key: string, body: AdfDoc) => call(`issue/${encodeURIComponent(key)}/comment`, { body });

  if (!Array.isArray(post) && 'issue' in post) {
    const { labels } = destination;
    const fields = {
      project: { key: destination.project },
      issuetype: { name: destination.issueType ?? DEFAULT_ISSUE_TYPE },
      ...post.issue,
      ...(labels && labels.length > 0 ? { labels } : {}),
    };
    return outcomeOf(await call('issue', { fields }));
  }
  if (!Array.isArray(post)) {
    const key = issueKeyOf(post.opening);
    if (key === undefined) return { kind: 'refused', reason: 'no_issue' };
    return outcomeOf(await comment(key, noteDocument(post.note)));
  }

  const [message, , anomaly = OPENING, triage, context] = post;
  const costCenters = context?.costCenters;
  const escalation = context?.escalation;
  const link = triage && 'link' in triage ? triage.link : undefined;
  const update: JiraUpdate | undefined = anomaly.kind === 'follow_up' ? anomaly : undefined;
  const create = async (): Promise<PostOutcome> => {
    const answer = await call('issue', {
      fields: issueFields(message, destination, update, link, costCenters, escalation, context?.chartUrl),
    });
    const outcome = outcomeOf(answer);
    if (outcome.kind !== 'delivered' || 'kind' in answer) return outcome;
    // Created, whatever the body says: trying again would create a second issue.
    const key = createdKey(answer.body);
    return key ? { kind: 'delivered', opened: issueRef(key) } : { kind: 'delivered' };
  };

  const key = anomaly.kind === 'follow_up' ? issueKeyOf(anomaly.opening) : undefined;
  if (!update || key === undefined) return create();
  const answer = await comment(key, alertDocument(alertView(message, costCenters), update, link, escalation, context?.chartUrl));
  // The issue was deleted (or moved where this account cannot see it): the update opens a new one.
  if (!('kind' in answer) && answer.status === 404) return create();
  return outcomeOf(answer);
}
