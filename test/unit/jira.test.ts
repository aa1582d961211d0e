// The Jira kind through its port (lib/notify/jira): configuration, what it posts to a loopback
// Jira Cloud (test/helpers/jira-server.ts), what the answers mean, its triage note, and how
// `npm start` and the preview page show it.
import { inspect } from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import anomaly from '../../events/anomaly-alert.json' with { type: 'json' };
import { postingOver } from '../../lib/chat/post-json.js';
import { type AnomalyPost, type ChatService, type MessageRef, OPENING, type PostOutcome } from '../../lib/chat/service.js';
import { ConfigInvalidError } from '../../lib/config/errors.js';
import { parseRelayConfig } from '../../lib/config/load.js';
import { deliverOnce, OPENING_PENDING_SECONDS } from '../../lib/dedup/once.js';
import { createDelivery } from '../../lib/delivery/deliver.js';
import { newJob } from '../../lib/delivery/job.js';
import { deliveryJobSchema } from '../../lib/delivery/job-schema.js';
import type { SummaryWeek } from '../../lib/format/summary.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import type { AdfDoc } from '../../lib/notify/jira/adf.js';
import type { JiraDestination } from '../../lib/notify/jira/config.js';
import { JIRA_DOC_MAX_BYTES, JIRA_LIMITS } from '../../lib/notify/jira/format.js';
import { jiraKind } from '../../lib/notify/jira/kind.js';
import { classifyJiraAnswer, issueKeyOf, issueRef, postToJira, restApi } from '../../lib/notify/jira/lazy-jira-post.js';
import type { JiraPost } from '../../lib/notify/jira/payload.js';
import { addressOf, createChatServices, destinationType, kindOf, serviceFor } from '../../lib/notify/kinds.js';
import { toolsOf } from '../../lib/notify/tools.js';
import { fetchOverNodeHttp } from '../../lib/transport/fetch-over-node-http.js';
import { budgetOf } from '../helpers/budget.js';
import { capturedLogger, chatServices, manualClock, memoryDeadLetters, memoryRetryQueue } from '../helpers/fake-delivery-ports.js';
import { adfProblems, type FakeJira, startFakeJira } from '../helpers/jira-server.js';
import { memoryLedger } from '../helpers/memory-ledger.js';

const EMAIL = 'finops-bot@acme.example';
const TOKEN = 'ATATT3xJIRA-UNIT-TOKEN-9f1c';
const BASIC = Buffer.from(`${EMAIL}:${TOKEN}`).toString('base64');
const LINK = 'https://cost-alerts.example.org/triage/unit-token';
const message = webhookMessageSchema.parse(anomaly);
const hostile = webhookMessageSchema.parse({
  metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z' },
  payload: {
    title: '[x](https://evil.example) @here *bold* :zap: <!channel>',
    message: 'line one https://evil.example/pay\n\nline three [[mention]] {{DATE(x)}} \u202E00.001$',
    account_id: '123456789012',
    account_name: 'www.evil.example',
    cloud_provider_type: 'aws',
  },
});

const destinationOf = (site: string, more: Partial<JiraDestination> = {}): JiraDestination => ({
  type: 'jira',
  site,
  project: 'FIN',
  email: EMAIL,
  apiToken: TOKEN,
  ...more,
});

type Text = { type: 'text'; text: string; marks?: Array<{ type: string; attrs?: { href: string } }> };
/** Every text node of a document, in order. */
const textNodes = (value: unknown): Text[] => {
  if (Array.isArray(value)) return value.flatMap(textNodes);
  if (typeof value !== 'object' || value === null) return [];
  const node = value as Record<string, unknown>;
  return [...(node['type'] === 'text' ? [node as unknown as Text] : []), ...textNodes(node['content'])];
};
/** The fields of the issue the `index`th request created. */
const fieldsOf = (index = 0) =>
  (jira.requests[index]!.body as { fields: { summary: string; description: AdfDoc } & Record<string, unknown> }).fields;
const shown = (doc: unknown) =>
  textNodes(doc)
    .map((t) => t.text)
    .join('');

let jira: FakeJira;
let service: ChatService;
beforeAll(async () => {
  jira = await startFakeJira({ [EMAIL]: TOKEN });
  service = serviceFor(createChatServices(), destinationOf(jira.url));
});
afterAll(() => jira.close());
afterEach(() => jira.reset());

/** One post through the kind's own service, as the delivery core makes it. */
const post = (destination: JiraDestination, alert: WebhookMessage = message, anomalyPost: AnomalyPost = OPENING, timeoutMs = 2_000) =>
  service.post(addressOf(destination), service.format(alert, destination, anomalyPost, { link: LINK }), { timeoutMs });

const followUp = (opening?: MessageRef, more: Partial<Extract<AnomalyPost, { kind: 'follow_up' }>> = {}): AnomalyPost => ({
  kind: 'follow_up',
  firstSeenAt: '2026-11-21T14:32:05Z',
  updates: 2,
  ...(opening ? { opening } : {}),
  ...more,
});

describe('a Jira destination’s configuration', () => {
  const problemsOf = (destination: Record<string, unknown>) => {
    try {
      parseRelayConfig(
        JSON.stringify({ auth: { method: 'none' }, destinations: { default: { url: 'https://hooks.slack.com/x' }, tickets: destination } }),
      );
      return [];
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigInvalidError);
      return (error as ConfigInvalidError).problems;
    }
  };
  const example = {
    type: 'jira',
    site: 'https://acme.atlassian.net',
    project: 'FIN',
    issueType: 'Task',
    email: 'finops-bot@acme.com',
    apiToken: 'ATATT3x-CONFIG-SECRET',
    labels: ['cost-anomaly'],
  };

  it('takes the contract’s example, and one without issue type or labels', () => {
    expect(problemsOf(example)).toEqual([]);
    const { issueType: _type, labels: _labels, ...minimal } = example;
    expect(problemsOf(minimal)).toEqual([]);
    expect(destinationType(minimal)).toBe('jira');
  });

  it.each([
    [{ site: 'http://acme.atlassian.net' }, 'tickets.site'],
    [{ project: 'fin' }, 'tickets.project'],
    [{ project: 'F' }, 'tickets.project'],
    [{ project: 'FINANCE_OPS1' }, 'tickets.project'],
    [{ labels: ['cost anomaly'] }, 'tickets.labels.0'],
    [{ apiToken: '' }, 'tickets.apiToken'],
    [{ email: '' }, 'tickets.email'],
    [{ issueType: '' }, 'tickets.issueType'],
    [{ mention: '<!here>' }, 'tickets.mention'],
    [{ group: { waitSeconds: 60 } }, 'tickets.group'],
    [{ url: 'https://acme.atlassian.net' }, 'tickets.url'],
    [{ apitoken: 'typo' }, 'tickets.apitoken'],
  ])('refuses %o at %s, and never shows the token', (change, path) => {
    const problems = problemsOf({ ...example, ...change });
    expect(problems.map((p) => p.path)).toContain(`destinations.${path}`);
    expect(JSON.stringify(problems)).not.toContain('CONFIG-SECRET');
  });

  it('needs its type: a site alone never makes a destination a Jira one', () => {
    const { type: _type, ...untyped } = example;
    expect(destinationType(untyped)).not.toBe('jira');
    expect(problemsOf(untyped)).toContainEqual({
      path: 'destinations.tickets.type',
      problem: 'is required: "site" belongs to Jira destinations; add "type": "jira"',
    });
  });
});

describe('the Jira kind', () => {
  it('posts to the site, comments under the opening’s issue (follow-ups wait for its key) and links to the triage page', () => {
    const destination = destinationOf('https://acme.atlassian.net');
    expect(kindOf(destination)).toBe(jiraKind);
    expect(addressOf(destination)).toBe('https://acme.atlassian.net');
    expect(jiraKind.editsOpening()).toBe(true);
    expect(jiraKind.links()).toBe(true);
    expect(jiraKind.chat).toBe(false);
    expect(service.paceKey(addressOf(destination))).toBe('https://acme.atlassian.net');
    expect(service.minIntervalMs).toBeGreaterThan(0);
  });

  it('formats into a function: a payload serialized by mistake shows no token, e-mail or alert', () => {
    const payload = service.format(message, destinationOf(jira.url), OPENING, { link: LINK });
    expect(JSON.stringify({ payload }) ?? '').not.toContain(TOKEN);
    for (const shownAs of [JSON.stringify({ payload }), inspect(payload, { depth: 10 })]) {
      for (const secret of [TOKEN, BASIC, EMAIL, 'EC2']) expect(shownAs).not.toContain(secret);
    }
  });
});

describe('what a Jira destination posts', () => {
  it('an opening creates an issue with Basic authentication: the title as summary, the alert in ADF, the labels; it answers where the issue is', async () => {
    const outcome = await post(destinationOf(jira.url, { issueType: 'Bug', labels: ['cost-anomaly', 'finops'] }));
    expect(outcome).toEqual({ kind: 'delivered', opened: { channel: 'FIN', ts: 'FIN-1' } });
    const [request] = jira.requests;
    expect(request?.path).toBe('/rest/api/3/issue');
    expect(request?.headers.authorization).toBe(`Basic ${BASIC}`);
    expect(request?.headers['content-type']).toBe('application/json; charset=utf-8');
    const fields = fieldsOf();
    expect(fields).toMatchObject({
      project: { key: 'FIN' },
      issuetype: { name: 'Bug' },
      summary: 'Cost anomaly detected: Amazon EC2 in us-east-1',
      labels: ['cost-anomaly', 'finops'],
    });
    expect(adfProblems(fields['description'])).toEqual([]);
    const text = shown(fields['description']);
    expect(text).toContain('Daily cost of Amazon EC2 in us-east-1 rose to');
    expect(text).toContain('Account: Production payer (123456789012)');
    expect(text).toContain('2026-11-21T14:32:05Z');
    expect(jira.issues.get('FIN-1')).toBeDefined();
  });

  it('an issue type left out is a Task, and no labels are sent when none are configured', async () => {
    await post(destinationOf(jira.url));
    const fields = fieldsOf();
    expect(fields['issuetype']).toEqual({ name: 'Task' });
    expect(fields).not.toHaveProperty('labels');
  });

  it('keeps sender text in unmarked text nodes: only our own words carry marks, and the Triage link is the only link', async () => {
    expect(await post(destinationOf(jira.url), hostile)).toMatchObject({ kind: 'delivered' });
    const fields = fieldsOf();
    expect(adfProblems(fields.description)).toEqual([]);
    const marked = textNodes(fields.description).filter((t) => t.marks);
    expect(marked.map((t) => t.text)).toEqual(['Kind: ', 'Cloud: ', 'Account: ', 'Triage']);
    const links = marked.flatMap((t) => t.marks ?? []).filter((m) => m.type === 'link');
    expect(links).toEqual([{ type: 'link', attrs: { href: LINK } }]);
    const everything = `${fields.summary}\n${shown(fields.description)}`;
    for (const live of ['https://evil', 'www.evil.example', '@here', '<!channel>', '*bold*', ':zap:', '\u202E'])
      expect(everything).not.toContain(live);
    expect(everything).toContain('bold');
    // One line per line of the message: a line break, not a newline inside a text node.
    expect(textNodes(fields.description).some((t) => t.text.includes('\n'))).toBe(false);
  });

  it('a summary is one line of at most 255 characters, and a long message is cut to fit Jira’s field', async () => {
    const long = webhookMessageSchema.parse({
      ...anomaly,
      payload: { ...anomaly.payload, title: `${'T'.repeat(300)}\nsecond line`, message: `${'€<>&'.repeat(12_000)}\uD800` },
    });
    expect(await post(destinationOf(jira.url), long)).toMatchObject({ kind: 'delivered' });
    const fields = fieldsOf();
    expect(fields.summary.length).toBe(JIRA_LIMITS.summary);
    expect(fields.summary).not.toMatch(/\n/);
    expect(fields.summary.endsWith('…')).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(fields.description))).toBeLessThanOrEqual(JIRA_DOC_MAX_BYTES);
    expect(shown(fields.description)).toContain('€＜＞&€＜＞&');
    expect(shown(fields.description)).toContain('…');
    expect(adfProblems(fields.description)).toEqual([]);
  });

  it('an alert whose title and kind are blank once cleaned still files an issue, its summary saying where it came from', async () => {
    const blank = webhookMessageSchema.parse({
      metadata: { object_type: '\u0000\u202E' },
      payload: { title: '\u200F\u0007', message: 'Budget at 90%' },
    });
    expect(await post(destinationOf(jira.url), blank)).toMatchObject({ kind: 'delivered' });
    expect(fieldsOf().summary).toBe('Alert from the cost platform');
  });

  it('a follow-up is a comment on the opening’s issue, marked as update N with what someone decided', async () => {
    const opened = (await post(destinationOf(jira.url))) as Extract<PostOutcome, { kind: 'delivered' }>;
    const update = followUp(opened.opened, { triage: { state: 'acknowledged', by: 'Dana <!here>', at: 1_795_000_000 } });
    expect(await post(destinationOf(jira.url), message, update)).toEqual({ kind: 'delivered' });
    expect(jira.requests.map((r) => r.path)).toEqual(['/rest/api/3/issue', '/rest/api/3/issue/FIN-1/comment']);
    expect(jira.requests[1]?.headers.authorization).toBe(`Basic ${BASIC}`);
    const [comment] = jira.issues.get('FIN-1')?.comments ?? [];
    expect(adfProblems(comment)).toEqual([]);
    const text = shown(comment);
    expect(text).toMatch(/^Update 2 of an anomaly first seen 2026-11-21T14:32:05Z · Acknowledged by Dana ＜!here＞ at 2026-/);
    expect(text).toContain('Daily cost of Amazon EC2');
    // The decider's name is typed text: unmarked, like the sender's.
    expect(textNodes(comment).find((t) => t.text.includes('Dana'))?.marks).toBeUndefined();
    expect(jira.issues.size).toBe(1);
  });

  it('a follow-up whose issue is unknown (its opening was lost) creates a new issue that says it is an update', async () => {
    const outcome = await post(destinationOf(jira.url), message, followUp());
    expect(outcome).toEqual({ kind: 'delivered', opened: { channel: 'FIN', ts: 'FIN-1' } });
    const fields = fieldsOf();
    expect(shown(fields.description)).toMatch(/^Update 2 of an anomaly first seen 2026-11-21T14:32:05Z/);
  });

  it('a follow-up whose issue is gone (404) creates a new one, within the post’s one deadline', async () => {
    await post(destinationOf(jira.url));
    jira.deleteIssue('FIN-1');
    const outcome = await post(destinationOf(jira.url), message, followUp({ channel: 'FIN', ts: 'FIN-1' }));
    expect(outcome).toEqual({ kind: 'delivered', opened: { channel: 'FIN', ts: 'FIN-2' } });
    expect(jira.requests.map((r) => r.answeredStatus)).toEqual([201, 404, 201]);
  });

  it('a follow-up whose comment Jira refuses otherwise is that refusal: no second issue', async () => {
    jira.queue({ status: 403 });
    const outcome = await post(destinationOf(jira.url), message, followUp({ channel: 'FIN', ts: 'FIN-7' }));
    expect(outcome).toEqual({ kind: 'refused', reason: 'http_403' });
    expect(jira.requests).toHaveLength(1);
  });

  it('an answer that names no usable key is still delivered (trying again would create a second issue), without a place', async () => {
    for (const body of ['not json', { key: 'FIN-1/../../x' }, { id: '1' }, null]) {
      jira.queue({ status: 201, body });
      expect(await post(destinationOf(jira.url))).toEqual({ kind: 'delivered' });
    }
  });

  it('posts below a site’s path, without its query, fragment or credentials', async () => {
    expect(restApi('https://user:pw@acme.atlassian.net/?x=1#y').href).toBe('https://acme.atlassian.net/rest/api/3/');
    expect(restApi('http://127.0.0.1:3000/console/jira/').href).toBe('http://127.0.0.1:3000/console/jira/rest/api/3/');
    const outcome = await service.post(`${jira.url}/`, service.format(message, destinationOf(`${jira.url}/`), OPENING), {
      timeoutMs: 2_000,
    });
    expect(outcome).toMatchObject({ kind: 'delivered' });
    expect(jira.requests[0]?.path).toBe('/rest/api/3/issue');
  });
});

describe('a Jira anomaly behind the dedup ledger', () => {
  function setup() {
    const clock = manualClock();
    const ledger = memoryLedger(clock.now);
    const log = capturedLogger();
    const delivery = createDelivery({
      services: chatServices({ jira: service }),
      postTimeoutMs: 2_000,
      retryQueue: memoryRetryQueue(),
      deadLetters: memoryDeadLetters(),
      logger: log.logger,
      now: clock.now,
      sleep: clock.sleep,
    });
    const first = deliverOnce({ ledger, delivery, logger: log.logger, now: clock.now });
    const target = { name: 'tickets', destination: destinationOf(jira.url) };
    const send = (text: string) =>
      first(
        { deliveryId: text, target, message: webhookMessageSchema.parse({ ...anomaly, payload: { ...anomaly.payload, message: text } }) },
        budgetOf(10_000),
      );
    return { clock, ledger, send };
  }

  it('a follow-up comments on the issue the opening created, whose key the ledger keeps', async () => {
    const s = setup();
    expect(await s.send('up 20%')).toEqual({ kind: 'delivered', opened: { channel: 'FIN', ts: 'FIN-1' } });
    expect([...s.ledger.anomalies.values()][0]?.opening).toEqual({ channel: 'FIN', ts: 'FIN-1' });
    expect(await s.send('up 45%')).toEqual({ kind: 'delivered' });
    expect(jira.issues.get('FIN-1')?.comments).toHaveLength(1);
  });

  it('a follow-up waits while its opening’s issue is not created yet; once the opening is taken for lost, it creates the issue', async () => {
    const s = setup();
    jira.queue({ status: 429, retryAfterSeconds: 30 });
    expect((await s.send('up 20%')).kind).toBe('queued');
    // Posting now would create a second issue for the anomaly: it waits for the key instead.
    expect(await s.send('up 45%')).toMatchObject({ kind: 'in_progress' });
    expect(jira.requests).toHaveLength(1);
    s.clock.advance((OPENING_PENDING_SECONDS + 1) * 1000);
    expect(await s.send('up 60%')).toEqual({ kind: 'delivered', opened: { channel: 'FIN', ts: 'FIN-1' } });
    expect(shown(fieldsOf(1).description)).toMatch(/^Update 1 of an anomaly first seen/);
    expect(await s.send('up 75%')).toEqual({ kind: 'delivered' });
    expect(jira.issues.get('FIN-1')?.comments).toHaveLength(1);
  });
});

describe('where the anomaly’s issue is kept', () => {
  it('as the project and the key, in ids the queue’s jobs take, underscores and all', () => {
    for (const key of ['FIN-24', 'FIN_OPS-3', 'A1_B2_C3-9999999999']) {
      const ref = issueRef(key);
      expect(ref.ts).toMatch(/^[A-Za-z0-9.-]{1,40}$/);
      expect(issueKeyOf(ref)).toBe(key);
      const job = newJob('d', 'tickets', message, 'http_503', 0, followUp(ref));
      expect(deliveryJobSchema.safeParse(JSON.parse(JSON.stringify(job))).success).toBe(true);
    }
    expect(issueRef('FIN_OPS-3')).toEqual({ channel: 'FIN.OPS', ts: 'FIN.OPS-3' });
  });

  it('a stored reference that is no issue key is no issue', () => {
    for (const ts of ['1700000000.000100', 'FIN', 'fin-1', 'FIN-0', '../FIN-1']) expect(issueKeyOf({ channel: 'FIN', ts })).toBeUndefined();
    expect(issueKeyOf(undefined)).toBeUndefined();
  });
});

describe('what a Jira answer means', () => {
  const answer = (status: number, retryAfter: string | null = null) => ({ status, body: '', retryAfter });
  it.each([
    [answer(201), { kind: 'delivered' }],
    [answer(429, '7'), { kind: 'retryable', reason: 'http_429', retryAfterMs: 7_000 }],
    [answer(429), { kind: 'retryable', reason: 'http_429' }],
    [answer(503, '30'), { kind: 'retryable', reason: 'http_503', retryAfterMs: 30_000 }],
    [answer(500), { kind: 'retryable', reason: 'http_500' }],
    [answer(408), { kind: 'retryable', reason: 'http_408' }],
    [answer(400), { kind: 'refused', reason: 'http_400' }],
    [answer(401), { kind: 'refused', reason: 'http_401' }],
    [answer(403), { kind: 'refused', reason: 'http_403' }],
    [answer(404), { kind: 'refused', reason: 'http_404' }],
  ])('%o → %o', (given, expected) => {
    expect(classifyJiraAnswer(given)).toEqual(expected);
  });

  it('over the wire: a 400 names fields in Jira’s words, none of which reach the reason; bad credentials are a 401 refusal', async () => {
    const refused = await post(destinationOf(jira.url, { project: 'NOPE' }));
    expect(refused).toEqual({ kind: 'refused', reason: 'http_400' });
    expect(jira.requests[0]?.answeredStatus).toBe(400);
    expect(await post(destinationOf(jira.url, { apiToken: 'wrong' }))).toEqual({ kind: 'refused', reason: 'http_401' });
  });

  it('over the wire: a redirect is refused, a hang times out', async () => {
    jira.queue({ status: 302, headers: { location: 'https://elsewhere.example/' } });
    expect(await post(destinationOf(jira.url))).toEqual({ kind: 'refused', reason: 'redirect_refused' });
    jira.queue('hang');
    expect(await post(destinationOf(jira.url), message, OPENING, 200)).toEqual({ kind: 'retryable', reason: 'timeout' });
  });

  it('a network error is retryable', async () => {
    const payload: JiraPost = () => [message, destinationOf('http://127.0.0.1:1'), OPENING];
    expect(await postToJira(postingOver(fetchOverNodeHttp), 'http://127.0.0.1:1', payload, { timeoutMs: 1_000 })).toEqual({
      kind: 'retryable',
      reason: 'network_error',
    });
  });
});

describe('a triage note at a Jira destination', () => {
  const noteFor = async (destination: JiraDestination, opening?: MessageRef) =>
    (await jiraKind.extras()).triageNote(destination, {
      action: 'acknowledge',
      line: 'Acknowledged by Dana ＜!here＞ at 2026-11-26T09:00:00Z',
      by: 'Dana ＜!here＞',
      at: 1_795_770_000,
      destination: 'tickets',
      anomalyId: 'anomaly#x',
      opening,
    });

  it('is a comment on the anomaly’s issue: the line as typed, unmarked', async () => {
    await post(destinationOf(jira.url));
    const destination = destinationOf(jira.url);
    expect(
      await service.post(addressOf(destination), await noteFor(destination, { channel: 'FIN', ts: 'FIN-1' }), { timeoutMs: 2_000 }),
    ).toEqual({
      kind: 'delivered',
    });
    const note = jira.issues.get('FIN-1')?.comments[0];
    expect(note).toEqual({
      type: 'doc',
      version: 1,
      content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Acknowledged by Dana ＜!here＞ at 2026-11-26T09:00:00Z' }] }],
    });
    expect(jira.requests[1]?.headers.authorization).toBe(`Basic ${BASIC}`);
  });

  it('is refused (`no_issue`) when the table knows no issue: nothing is posted', async () => {
    const destination = destinationOf(jira.url);
    expect(await service.post(addressOf(destination), await noteFor(destination), { timeoutMs: 2_000 })).toEqual({
      kind: 'refused',
      reason: 'no_issue',
    });
    expect(jira.requests).toHaveLength(0);
    expect(JSON.stringify({ note: await noteFor(destination) }) ?? '').not.toContain(TOKEN);
  });
});

describe('a weekly summary at a Jira destination', () => {
  const from = Date.parse('2026-11-16T09:00:00Z') / 1000;
  const weekOf = (anomalies: SummaryWeek['anomalies']): SummaryWeek => ({
    destination: 'tickets',
    from,
    to: from + 7 * 86_400,
    asOf: from + 7 * 86_400,
    timeZone: 'UTC',
    counts: { open: anomalies.filter((a) => a.state === 'open').length, acknowledged: 0, expected: 0, snoozed: 0 },
    anomalies,
  });

  it('is one issue: the heading as its summary, the counts and each anomaly, the open ones with their Triage link', async () => {
    const destination = destinationOf(jira.url);
    const week = weekOf([
      {
        id: 'anomaly#ec2',
        title: 'EC2 <!here> up',
        account: 'Prod (111111111111)',
        accountId: '111111111111',
        firstSeen: from,
        updates: 1,
        state: 'open',
        link: LINK,
      },
    ]);
    const summary = (await jiraKind.extras()).summary(destination, week);
    expect(await service.post(addressOf(destination), summary, { timeoutMs: 2_000 })).toMatchObject({ kind: 'delivered' });
    expect(jira.issues.size).toBe(1);
    const [issue] = [...jira.issues.values()];
    expect(issue?.fields['summary']).toBe('Weekly summary · tickets');
    const text = JSON.stringify(issue?.fields['description']);
    expect(text).toContain('1 anomaly first seen 16 Nov 2026 – 23 Nov 2026: 1 open');
    expect(text).toContain('EC2 ＜!here＞ up · Prod (111111111111) · open 7 d · 1 update');
    expect(text).toContain(`"href":"${LINK}"`);
  });

  it('a quiet week is an issue of one line, its summary', async () => {
    const destination = destinationOf(jira.url);
    const summary = (await jiraKind.extras()).summary(destination, weekOf([]));
    expect(await service.post(addressOf(destination), summary, { timeoutMs: 2_000 })).toMatchObject({ kind: 'delivered' });
    const [issue] = [...jira.issues.values()];
    expect(issue?.fields['summary']).toBe('Weekly summary · tickets: no anomalies in the 7 days to 23 Nov 2026.');
    expect(issue?.fields['description']).toBeUndefined();
  });
});

describe('Jira under npm start and on the preview page', () => {
  it('the console plays issues and comments: 201 with a key, 404 for an unknown issue, 400 naming a refused field', async () => {
    const tools = await toolsOf('jira');
    const play = tools.createConsole();
    const fields = {
      project: { key: 'FIN' },
      issuetype: { name: 'Task' },
      summary: 'EC2 <b>up</b>',
      description: { type: 'doc', version: 1, content: [] },
    };
    const created = play('/rest/api/3/issue', { fields });
    expect(created).toMatchObject({ status: 201, record: { issue: 'FIN-1', fields } });
    expect(JSON.parse(created.body ?? '')).toMatchObject({ key: 'FIN-1' });
    const body = { type: 'doc', version: 1, content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Update 1' }] }] };
    const commented = play('/rest/api/3/issue/FIN-1/comment', { body });
    expect(commented).toMatchObject({ status: 201, record: { issue: 'FIN-1', comment: body } });
    expect(commented.show.join('\n')).toContain('Update 1');
    expect(play('/rest/api/3/issue/FIN-9/comment', { body })).toMatchObject({ status: 404 });
    // Issues are numbered on their own, whatever was commented in between.
    expect(JSON.parse(play('/rest/api/3/issue', { fields }).body ?? '')).toMatchObject({ key: 'FIN-2' });
    // Anyone on this machine may post to a console path: what it shows is escaped.
    const preview = tools.preview(created.record, '09:00:00').value;
    expect(preview).toContain('EC2 &lt;b&gt;up&lt;/b&gt;');
    expect(preview).not.toContain('<b>');
    expect(play('/rest/api/3/issue', { fields: { ...fields, project: { key: 'x' } } })).toMatchObject({ status: 400 });
    expect(play('/rest/api/3/issue', { fields: { ...fields, summary: 'two\nlines' } })).toMatchObject({ status: 400 });
    expect(play('/rest/api/3/search', {})).toMatchObject({ status: 404 });
    expect(tools.consoleEnvironment).toBeUndefined();
  });

  it('the console takes what the relay posts, and the preview shows it escaped, with the Triage link as a button', async () => {
    const tools = await toolsOf('jira');
    const play = tools.createConsole();
    const posts: unknown[] = [];
    const destination = destinationOf('http://127.0.0.1:3000/console/jira');
    const consoleTransport = async (url: string | URL, init?: { body?: unknown }) => {
      const path = new URL(url).pathname.replace('/console/jira', '');
      const answered = play(path, JSON.parse(String(init?.body)));
      posts.push(answered.record);
      return new Response(answered.body, { status: answered.status });
    };
    const consoleService = serviceFor(createChatServices(consoleTransport as never), destination);
    const opened = await consoleService.post(addressOf(destination), consoleService.format(hostile, destination, OPENING, { link: LINK }), {
      timeoutMs: 1_000,
    });
    expect(opened).toEqual({ kind: 'delivered', opened: { channel: 'FIN', ts: 'FIN-1' } });
    await consoleService.post(
      addressOf(destination),
      consoleService.format(hostile, destination, followUp(opened.kind === 'delivered' ? opened.opened : undefined)),
      {
        timeoutMs: 1_000,
      },
    );
    const [issue, comment] = posts.map((record) => tools.preview(record, '09:00:00').value);
    expect(issue).toContain('FIN-1');
    expect(issue).toContain(`<a class="button" href="${LINK}"`);
    expect(issue).not.toContain('<!channel>');
    expect(issue).toContain('＜!channel＞');
    expect(issue).toContain('<strong>Account: </strong>');
    expect(comment).toContain('comment on FIN-1');
    expect(comment).toContain('<em>Update 2 of an anomaly first seen');
    // What only someone posting to the console path could send: drawn as text or marked as unsupported.
    const odd = tools.preview(
      { issue: 'X-1', comment: { content: [{ type: 'mediaSingle' }, { type: 'paragraph', content: [{ type: 'mention' }] }] } },
      't',
    ).value;
    expect(odd).toContain('unsupported');
    expect(
      tools.preview(
        {
          issue: 'X-1',
          comment: {
            content: [
              {
                type: 'paragraph',
                content: [{ type: 'text', text: 'x', marks: [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }] }],
              },
            ],
          },
        },
        't',
      ).value,
    ).not.toContain('href="javascript');
  });

  it('conformance names the token and the Basic credentials as secrets', async () => {
    const { conformance } = await toolsOf('jira');
    const [variant] = conformance.variants('http://127.0.0.1:9');
    expect(conformance.secrets(variant!.destination)).toEqual([
      'JIRA-TOKEN-SECRET',
      Buffer.from('bot@example.com:JIRA-TOKEN-SECRET').toString('base64'),
    ]);
  });
});
