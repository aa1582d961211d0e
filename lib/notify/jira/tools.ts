// How `npm start` and its preview page show Jira: a console that plays Jira Cloud's REST API
// (creating issues and comments), and an HTML approximation of an issue and its comments.
// Loaded by the scripts and tests (lib/notify/tools.ts), never by a function.
import type { ConsoleAnswer, KindTools } from '../kind.js';
import { arr, bold, dim, html, type Json, link, linkButton, obj, type SafeHtml, str, textsIn, unsupported } from '../preview.js';

const PROJECT_KEY = /^[A-Z][A-Z0-9_]{1,9}$/;
const COMMENT_PATH = /^\/rest\/api\/3\/issue\/([^/]+)\/comment$/;

/** What the console records for the preview page: an issue it created, or a comment on one. */
type Recorded = { issue: string; fields: Json } | { issue: string; comment: unknown };

// ── ADF as the terminal shows it ────────────────────────────────────────────────────────────
function inlineText(node: Json): string {
  if (node['type'] === 'hardBreak') return '\n';
  if (node['type'] !== 'text') return `[${str(node['type']) ?? '?'}]`;
  const text = str(node['text']) ?? '';
  const marks = arr(node['marks']).map(obj);
  const href = marks.map((m) => str(obj(m['attrs'])['href'])).find(Boolean);
  const shown = marks.some((m) => m['type'] === 'strong') ? bold(text) : marks.some((m) => m['type'] === 'em') ? dim(text) : text;
  return href ? `${bold(`[${shown}]`)} ${href}` : shown;
}

function blockText(node: Json): string {
  if (node['type'] === 'paragraph') return arr(node['content']).map(obj).map(inlineText).join('');
  if (node['type'] === 'bulletList') {
    return arr(node['content'])
      .map((item) => `• ${arr(obj(item)['content']).map(obj).map(blockText).join(' ')}`)
      .join('\n');
  }
  return `[${str(node['type']) ?? '?'}]`;
}

const docText = (doc: unknown) => arr(obj(doc)['content']).map(obj).map(blockText).join('\n');

// ── ADF as the preview page shows it ────────────────────────────────────────────────────────
function inlineHtml(node: Json): SafeHtml {
  if (node['type'] === 'hardBreak') return html`<br>`;
  if (node['type'] !== 'text') return unsupported(`an ADF "${str(node['type']) ?? '?'}" node`);
  const text = str(node['text']) ?? '';
  const marks = arr(node['marks']).map(obj);
  const href = marks.map((m) => (m['type'] === 'link' ? str(obj(m['attrs'])['href']) : undefined)).find(Boolean);
  // A link button is followed, as Jira would: only the relay's own Triage link is one.
  if (href) return text === 'Triage' ? linkButton(text, href) : link(href, text);
  let shown: SafeHtml = html`${text}`;
  if (marks.some((m) => m['type'] === 'em')) shown = html`<em>${shown}</em>`;
  if (marks.some((m) => m['type'] === 'strong')) shown = html`<strong>${shown}</strong>`;
  return shown;
}

function blockHtml(node: Json): SafeHtml {
  if (node['type'] === 'paragraph') return html`<p>${arr(node['content']).map(obj).map(inlineHtml)}</p>`;
  if (node['type'] === 'bulletList') {
    return html`<ul>${arr(node['content']).map((item) => html`<li>${arr(obj(item)['content']).map(obj).map(blockHtml)}</li>`)}</ul>`;
  }
  return unsupported(`an ADF "${str(node['type']) ?? '?'}" block`);
}

/** An ADF document as HTML: every text escaped, only the marks the relay uses drawn. */
export const adfHtml = (doc: unknown): SafeHtml => html`${arr(obj(doc)['content']).map(obj).map(blockHtml)}`;

function jiraPreview(body: unknown, time: string): SafeHtml {
  const recorded = obj(body);
  const issue = str(recorded['issue']) ?? '?';
  const sender = html`<div class="sender"><span class="avatar" aria-hidden="true">¢</span><strong>Cost Alert Relay</strong><span class="badge">${
    'comment' in recorded ? `comment on ${issue}` : issue
  }</span><span class="muted receipt">${time}</span></div>`;
  if ('comment' in recorded) return html`<div class="jira">${sender}${adfHtml(obj(recorded['comment']))}</div>`;
  const fields = obj(recorded['fields']);
  const labels = arr(fields['labels']).map(str).filter(Boolean);
  return html`<div class="jira">${sender}
    <h3>${str(fields['summary']) ?? ''}</h3>
    <p class="muted">${str(obj(fields['issuetype'])['name']) ?? ''} in ${str(obj(fields['project'])['key']) ?? ''}${
      labels.length > 0 ? html` · labels: ${labels.join(', ')}` : ''
    }</p>
    ${adfHtml(fields['description'])}
  </div>`;
}

const json = (status: number, body: unknown, show: string[], record?: Recorded): ConsoleAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
  show,
  ...(record ? { record } : {}),
});

/** Jira's 400 for an issue it cannot create: field names and Jira's words. */
const refusedFields = (errors: Record<string, string>) =>
  json(400, { errorMessages: [], errors }, [`\n── Jira (console destination) refused the issue: ${Object.keys(errors).join(', ')} ──\n`]);

// What people read in an issue or comment: its summary and every text node (marks' links are attributes).
const JIRA_TEXTS = new Set(['text', 'summary']);

export const tools: KindTools = {
  conformance: {
    variants: (base) => [
      {
        name: 'Jira Cloud project',
        destination: {
          type: 'jira',
          site: base,
          project: 'FIN',
          issueType: 'Task',
          email: 'bot@example.com',
          apiToken: 'JIRA-TOKEN-SECRET',
        },
      },
    ],
    accepted: {
      status: 201,
      headers: { 'content-type': 'application/json' },
      body: '{"id":"10000","key":"FIN-24","self":"https://x/rest/api/3/issue/10000"}',
    },
    shown: (body) => textsIn(body, JIRA_TEXTS),
    secrets: (destination) => {
      const { email, apiToken } = destination as { email: string; apiToken: string };
      return [apiToken, Buffer.from(`${email}:${apiToken}`).toString('base64')];
    },
    // The description's 32,767 characters, counted on its JSON, and the other fields.
    maxBytes: 34_000,
  },
  name: 'Jira Cloud',
  fidelity: 'HTML approximation of a Jira issue and its comments, not Jira’s own rendering',
  preview: jiraPreview,
  createConsole() {
    let created = 0;
    let commented = 0;
    const issues = new Set<string>();
    return (rest, body) => {
      const onIssue = COMMENT_PATH.exec(rest);
      if (onIssue) {
        const issue = decodeURIComponent(onIssue[1]!);
        if (!issues.has(issue)) {
          return json(404, { errorMessages: ['Issue does not exist or you do not have permission to see it.'], errors: {} }, [
            `\n── Jira (console destination): no issue ${issue} here, so no comment ──\n`,
          ]);
        }
        const comment = obj(body)['body'];
        const show = [`\n── Jira: comment on ${issue} (console destination) ──\n${docText(comment)}\n`];
        return json(201, { id: String(++commented), body: comment }, show, { issue, comment });
      }
      if (rest !== '/rest/api/3/issue') return json(404, { errorMessages: ['Not found: the console plays issues and comments.'] }, []);
      const fields = obj(obj(body)['fields']);
      const project = str(obj(fields['project'])['key']) ?? '';
      const summary = str(fields['summary']) ?? '';
      if (!PROJECT_KEY.test(project)) return refusedFields({ project: 'Specify a valid project ID or key' });
      if (summary.trim() === '' || summary.length > 255 || /[\r\n]/.test(summary)) {
        return refusedFields({ summary: 'Summary must be one line of at most 255 characters.' });
      }
      const issue = `${project}-${++created}`;
      issues.add(issue);
      const type = str(obj(fields['issuetype'])['name']) ?? '';
      const show = [
        `\n── Jira: new ${type} ${issue} (console destination) ──\n${bold(summary)}\n${docText(fields['description'])}\n`,
        'description JSON (paste into the ADF builder, https://developer.atlassian.com/cloud/jira/platform/apis/document/playground/):',
        `${JSON.stringify(fields['description'] ?? null, null, 2)}\n`,
      ];
      return json(201, { id: String(10_000 + created), key: issue, self: `/rest/api/3/issue/${10_000 + created}` }, show, {
        issue,
        fields,
      });
    };
  },
};
