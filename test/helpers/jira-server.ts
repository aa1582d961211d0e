import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './loopback-server.js';

/** An answer the fake gives instead of its usual one (Jira's own words where it has them). */
export type JiraAnswer =
  | { status: number; retryAfterSeconds?: number; body?: unknown; headers?: Record<string, string> }
  /** No answer at all, until the server closes. */
  | 'hang';

export interface JiraRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
  receivedAt: number;
  answeredStatus: number;
}

/** An issue as the fake site holds it: the fields it was created with and the comments since. */
export interface StoredIssue {
  key: string;
  fields: Record<string, unknown>;
  comments: unknown[];
}

export interface FakeJira {
  /** The site's address, as a destination's `site` names it. */
  url: string;
  requests: JiraRequest[];
  issues: Map<string, StoredIssue>;
  /** The next `count` requests get `answer`, then the usual ones again. */
  queue(answer: JiraAnswer, count?: number): void;
  /** The issue is gone, as when someone deleted it: a comment on it is answered 404. */
  deleteIssue(key: string): void;
  /** Forgets every request and issue: the next issue is number 1 again. */
  reset(): void;
  close(): Promise<void>;
}

/** What makes a document one that Jira takes, and that the relay is allowed to write: its problems, by path. */
export function adfProblems(doc: unknown): string[] {
  const problems: string[] = [];
  const object = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
  const inline = (node: unknown, at: string): void => {
    if (!object(node)) {
      problems.push(`${at}: not a node`);
      return;
    }
    if (node['type'] === 'hardBreak') return;
    if (node['type'] !== 'text') {
      problems.push(`${at}: ${String(node['type'])} is no node the relay writes`);
      return;
    }
    if (typeof node['text'] !== 'string' || node['text'] === '') problems.push(`${at}: empty text`);
    for (const mark of (node['marks'] as unknown[] | undefined) ?? []) {
      const type = object(mark) ? mark['type'] : undefined;
      if (!['strong', 'em', 'link'].includes(String(type))) problems.push(`${at}: mark ${String(type)}`);
    }
  };
  const block = (node: unknown, at: string): void => {
    if (!object(node) || !Array.isArray(node['content'])) {
      problems.push(`${at}: a block without content`);
      return;
    }
    const content: unknown[] = node['content'];
    if (content.length === 0) problems.push(`${at}: empty ${String(node['type'])}`);
    if (node['type'] === 'paragraph') {
      for (const [i, n] of content.entries()) inline(n, `${at}.${i}`);
    } else if (node['type'] === 'bulletList') {
      for (const [i, item] of content.entries()) {
        if (!object(item) || item['type'] !== 'listItem' || !Array.isArray(item['content'])) problems.push(`${at}.${i}: not a list item`);
        else for (const [j, n] of (item['content'] as unknown[]).entries()) block(n, `${at}.${i}.${j}`);
      }
    } else problems.push(`${at}: ${String(node['type'])} is no block the relay writes`);
  };
  if (!object(doc) || doc['type'] !== 'doc' || doc['version'] !== 1 || !Array.isArray(doc['content'])) return ['not an ADF document'];
  for (const [i, n] of (doc['content'] as unknown[]).entries()) block(n, `content.${i}`);
  return problems;
}

/**
 * A loopback stand-in for Jira Cloud's REST API v3: `POST /rest/api/3/issue` and
 * `POST /rest/api/3/issue/{key}/comment`, with Basic authentication for the accounts it is
 * given (`email` → API token), the projects and issue types it has, issues and comments held
 * in memory, and the answers Jira documents: 201, 400 with `errors` by field, 401, 404, 429
 * and 503 with Retry-After.
 */
export async function startFakeJira(
  accounts: Record<string, string>,
  projects: Record<string, string[]> = { FIN: ['Task', 'Bug'] },
): Promise<FakeJira> {
  const requests: JiraRequest[] = [];
  const issues = new Map<string, StoredIssue>();
  const queued: JiraAnswer[] = [];
  const hanging = new Set<ServerResponse>();
  let next = 0;
  let created = 0;
  const allowed = new Set(Object.entries(accounts).map(([email, token]) => `Basic ${Buffer.from(`${email}:${token}`).toString('base64')}`));

  const answer = (req: IncomingMessage, path: string, body: unknown): { status: number; body: unknown } => {
    if (req.method !== 'POST') return { status: 405, body: {} };
    if (!allowed.has(req.headers.authorization ?? '')) {
      return { status: 401, body: { errorMessages: ['Client must be authenticated to access this resource.'], errors: {} } };
    }
    const given = (body ?? {}) as Record<string, Record<string, unknown>>;
    const refused = (errors: Record<string, string>) => ({ status: 400, body: { errorMessages: [], errors } });
    const comment = /^\/rest\/api\/3\/issue\/([^/]+)\/comment$/.exec(path);
    if (comment) {
      const issue = issues.get(decodeURIComponent(comment[1]!));
      if (!issue)
        return { status: 404, body: { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} } };
      if (adfProblems(given['body']).length > 0) return refused({ comment: 'Comment body is not valid!' });
      issue.comments.push(given['body']);
      return { status: 201, body: { id: String(++next), body: given['body'] } };
    }
    if (path !== '/rest/api/3/issue') return { status: 404, body: { errorMessages: ['Not found'] } };
    const fields = given['fields'] ?? {};
    const project = (fields['project'] as { key?: string } | undefined)?.key ?? '';
    const type = (fields['issuetype'] as { name?: string } | undefined)?.name ?? '';
    const summary = fields['summary'];
    const labels = fields['labels'];
    if (!Object.hasOwn(projects, project)) return refused({ project: 'Specify a valid project ID or key' });
    if (!projects[project]!.includes(type)) return refused({ issuetype: 'Specify an issue type' });
    if (typeof summary !== 'string' || summary.trim() === '') return refused({ summary: 'You must specify a summary of the issue.' });
    if (summary.length > 255 || /[\r\n]/.test(summary)) return refused({ summary: "Summary can't exceed 255 characters." });
    if (labels !== undefined && (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string' || /\s/.test(l)))) {
      return refused({ labels: 'The label must not contain spaces.' });
    }
    if (fields['description'] !== undefined && adfProblems(fields['description']).length > 0)
      return refused({ description: 'Operation value must be an Atlassian Document.' });
    const id = ++created;
    const key = `${project}-${id}`;
    issues.set(key, { key, fields, comments: [] });
    return { status: 201, body: { id: String(10_000 + id), key, self: `/rest/api/3/issue/${10_000 + id}` } };
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const request: JiraRequest = { path, headers: req.headers, body, receivedAt: Date.now(), answeredStatus: 0 };
      requests.push(request);
      const planned = queued.shift();
      if (planned === 'hang') {
        hanging.add(res);
        return;
      }
      const {
        status,
        body: answered,
        headers = {},
      } = planned
        ? {
            status: planned.status,
            body: planned.body ?? { errorMessages: [`HTTP ${planned.status}`], errors: {} },
            headers: {
              ...(planned.retryAfterSeconds !== undefined ? { 'retry-after': String(planned.retryAfterSeconds) } : {}),
              ...planned.headers,
            },
          }
        : { ...answer(req, path, body), headers: {} };
      request.answeredStatus = status;
      res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', ...headers }).end(JSON.stringify(answered));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    issues,
    queue: (planned, count = 1) => {
      for (let i = 0; i < count; i++) queued.push(planned);
    },
    deleteIssue: (key) => issues.delete(key),
    reset: () => {
      requests.length = 0;
      issues.clear();
      queued.length = 0;
      created = 0;
    },
    close: () => closeServer(server, hanging),
  };
}
