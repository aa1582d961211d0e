import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Destination } from '../../lib/config/schema.js';
import type { CostEventSubject } from '../../lib/cost-events/events.js';
import { inMemoryLedger } from '../../lib/dedup/memory.js';
import { escapeHtml } from '../../lib/format/html.js';
import { triageLine, triageName } from '../../lib/format/triage.js';
import { createLogger } from '../../lib/log/logger.js';
import { threadedUrl } from '../../lib/notify/googlechat/post.js';
import { addressOf, KINDS, kindOf } from '../../lib/notify/kinds.js';
import { triageButtons } from '../../lib/notify/slack/triage-blocks.js';
import { createTriageHandler, type TriagePorts } from '../../lib/triage/handle.js';
import { renderTriagePage } from '../../lib/triage/page.js';
import { AUDIT_KEPT, effectiveState } from '../../lib/triage/state.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { signTriageToken } from '../../lib/triage-link/sign.js';
import { verifyTriageToken } from '../../lib/triage-link/token.js';
import { SNOOZE_SECONDS } from '../../lib/vocabulary/triage.js';
import { budgetOf } from '../helpers/budget.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const SIGNING_SECRET = 'signing-secret-value-8f3a';
const TOKEN_KEY = 'triage-key-value-7d1c-abcdefghijkl-0123456789';
const BOT_TOKEN = 'xoxb-bot-token-value';
const ANOMALY = 'anomaly#abc123#finops';
const T0 = Date.UTC(2026, 10, 24, 9, 0, 0);

type SlackBlock = Record<string, unknown> & { block_id?: string };

/** The ports, with the Slack app's parts as the tests name them: the signing secret, and the edit of the clicked message. */
interface SetupOptions extends Partial<TriagePorts> {
  slackSigningSecret?: () => Promise<string | undefined>;
  updateSlackMessage?: (opening: unknown, blocks: SlackBlock[], text: string, signal: AbortSignal) => Promise<void>;
}

function setup({ slackSigningSecret, updateSlackMessage, ...overrides }: SetupOptions = {}) {
  let nowMs = T0;
  const lines: string[] = [];
  const store = memoryTriageStore(() => nowMs);
  const metrics = memoryMetrics();
  const updates: Array<{ blocks: SlackBlock[]; text: string }> = [];
  const followUps: Array<{ destination: string; text: string; by: string; at: number }> = [];
  const secret = slackSigningSecret ?? (async () => SIGNING_SECRET);
  const edit =
    updateSlackMessage ??
    (async (_opening: unknown, blocks: SlackBlock[], text: string) => {
      updates.push({ blocks, text });
    });
  const ports: TriagePorts = {
    tokenKey: async () => TOKEN_KEY,
    interactionsAt: (path) =>
      path === KINDS.slack.interactionPath
        ? async () => ({ type: 'slack', interactions: (await KINDS.slack.extras()).interactions!, secret: await secret() })
        : undefined,
    store,
    postAsApp: async (_to, payload, signal) => {
      const { body } = payload as { body: { channel: string; ts: string; blocks: SlackBlock[]; text: string } };
      await edit({ channel: body.channel, ts: body.ts }, body.blocks, body.text, signal);
    },
    postFollowUp: async (token, note) => {
      followUps.push({ destination: token.d, text: note.line, by: note.by, at: note.at });
    },
    destinationTypeOf: async (name) => (name === 'finops' ? 'teams' : undefined),
    metrics,
    logger: createLogger({ sink: (line) => lines.push(line) }),
    now: () => nowMs,
    ...overrides,
  };
  const handle = createTriageHandler(ports);
  return {
    handle,
    store,
    metrics,
    lines,
    updates,
    followUps,
    advance: (ms: number) => {
      nowMs += ms;
    },
    now: () => nowMs,
  };
}

function clickBody(action: string, user = { id: 'U042', username: 'dana' }) {
  const payload = {
    type: 'block_actions',
    user,
    actions: [{ action_id: `triage_${action}`, value: ANOMALY }],
    container: { channel_id: 'C0123ABCD', message_ts: '1700000000.000100' },
    message: {
      text: 'Cost anomaly',
      blocks: [{ type: 'section', block_id: 'alert', text: { type: 'mrkdwn', text: 'Spend up' } }, triageButtons(ANOMALY, true)],
    },
  };
  return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

function signed(body: string, atMs: number, secret = SIGNING_SECRET) {
  const timestamp = String(Math.floor(atMs / 1000));
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature };
}

const click = (t: ReturnType<typeof setup>, body: string, headers: Record<string, string>) =>
  t.handle({ method: 'POST', path: '/slack/interactions', headers, body }, budgetOf(3_000));

const pageToken = (nowMs = T0, key = TOKEN_KEY) =>
  signTriageToken(key, { a: ANOMALY, d: 'finops', t: 'EC2 <script>alert(1)</script> spend', c: '123456789012' }, nowMs);

describe('Slack clicks', () => {
  it('a validly signed click records the action, counts it and shows who did what on the opening message', async () => {
    const t = setup();
    const body = clickBody('acknowledge');
    const answer = await click(t, body, signed(body, T0));
    expect(answer.statusCode).toBe(200);
    expect(t.store.records.get(ANOMALY)?.triage).toMatchObject({ state: 'acknowledged', by: 'dana' });
    expect(t.store.records.get(ANOMALY)?.audit).toEqual([{ who: 'dana', action: 'acknowledge', at: T0 / 1000 }]);
    expect(t.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'slack' })).toBe(1);
    const blocks = t.updates[0]?.blocks ?? [];
    expect(JSON.stringify(blocks)).toContain('Acknowledged by <@U042> at 2026-11-24T09:00:00Z');
    expect(blocks.find((b) => b.block_id === 'alert')).toBeDefined();
    const buttons = blocks.find((b) => b.block_id === 'triage_actions') as { elements: Array<{ text: { text: string } }> };
    expect(buttons.elements.map((e) => e.text.text)).toEqual(['Reopen']);
  });

  it('reopen brings the three buttons back', async () => {
    const t = setup();
    const acknowledge = clickBody('acknowledge');
    await click(t, acknowledge, signed(acknowledge, T0));
    t.advance(1_000);
    const body = clickBody('reopen');
    await click(t, body, signed(body, t.now()));
    const buttons = t.updates[1]?.blocks.find((b) => b.block_id === 'triage_actions') as { elements: Array<{ text: { text: string } }> };
    expect(buttons.elements.map((e) => e.text.text)).toEqual(['Acknowledge', 'Expected', 'Snooze 24 h']);
  });

  it.each([
    ['a wrong signature', (body: string) => signed(body, T0, 'another-secret')],
    ['a stale timestamp', (body: string) => signed(body, T0 - 301_000)],
    ['missing headers', () => ({})],
    ['a timestamp from the future', (body: string) => signed(body, T0 + 301_000)],
  ])('%s gets 401 and changes nothing', async (_name, headersFor) => {
    const t = setup();
    const body = clickBody('acknowledge');
    const answer = await click(t, body, headersFor(body) as Record<string, string>);
    expect(answer.statusCode).toBe(401);
    expect(t.store.records.size).toBe(0);
    expect(t.updates).toEqual([]);
  });

  it('a replay of an old request is refused, both later and at once', async () => {
    const t = setup();
    const body = clickBody('snooze');
    const headers = signed(body, T0);
    expect((await click(t, body, headers)).statusCode).toBe(200);
    expect((await click(t, body, headers)).statusCode).toBe(401);
    t.advance(10 * 60_000);
    expect((await click(t, body, headers)).statusCode).toBe(401);
    expect(t.store.records.get(ANOMALY)?.audit).toHaveLength(1);
  });

  it('a click that repeats the state changes nothing: no audit entry, no count, no edit', async () => {
    const t = setup();
    const first = clickBody('acknowledge');
    await click(t, first, signed(first, T0));
    t.advance(1_000);
    const again = clickBody('acknowledge', { id: 'U043', username: 'lee' });
    expect((await click(t, again, signed(again, t.now()))).statusCode).toBe(200);
    expect(t.store.records.get(ANOMALY)?.triage).toMatchObject({ state: 'acknowledged', by: 'dana' });
    expect(t.store.records.get(ANOMALY)?.audit).toHaveLength(1);
    expect(t.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'slack' })).toBe(1);
    expect(t.updates).toHaveLength(1);
  });

  it('a signed click replayed into another container is refused there too: the record of seen requests is shared', async () => {
    const shared = memoryTriageStore(() => T0);
    const first = setup({ store: shared });
    const second = setup({ store: shared });
    const body = clickBody('snooze');
    const headers = signed(body, T0);
    expect((await click(first, body, headers)).statusCode).toBe(200);
    expect((await click(second, body, headers)).statusCode).toBe(401);
    expect(second.updates).toEqual([]);
    expect(shared.records.get(ANOMALY)?.audit).toHaveLength(1);
  });

  it('a body changed after signing is refused', async () => {
    const t = setup();
    const headers = signed(clickBody('acknowledge'), T0);
    expect((await click(t, clickBody('expected'), headers)).statusCode).toBe(401);
  });

  it('a hung Slack is cut off in time: the answer still comes, the state is recorded', async () => {
    const t = setup({
      updateSlackMessage: (_o, _b, _t, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    const body = clickBody('expected');
    const answer = await click(t, body, signed(body, T0));
    expect(answer.statusCode).toBe(200);
    expect(t.store.records.get(ANOMALY)?.triage.state).toBe('expected');
  });

  it('a hung table is cut off in time: the message says the click did not take, buttons as they were, nothing counted', async () => {
    const t = setup({
      store: {
        read: async () => undefined,
        firstUse: async () => true,
        apply: (_i, _a, _w, _n, signal) => new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
      },
    });
    const body = clickBody('expected');
    expect((await click(t, body, signed(body, T0))).statusCode).toBe(200);
    expect(t.updates).toHaveLength(1);
    const blocks = t.updates[0]?.blocks ?? [];
    const status = JSON.stringify(blocks.find((b) => b.block_id === 'triage_status'));
    expect(status).toContain('could not be recorded in time; try again');
    expect(status).not.toMatch(/Marked expected/);
    const labels = JSON.stringify(blocks.find((b) => b.block_id === 'triage_actions'));
    expect(labels).toContain('Acknowledge');
    expect(labels).not.toContain('Reopen');
    expect(t.metrics.points).toEqual([]);
  });

  it('no signing secret configured: 401', async () => {
    const t = setup({ slackSigningSecret: async () => undefined });
    const body = clickBody('acknowledge');
    expect((await click(t, body, signed(body, T0))).statusCode).toBe(401);
  });

  it('a signing secret that cannot be read refuses the click with 401 and tells the operator; nothing is recorded', async () => {
    const t = setup({
      slackSigningSecret: async () => {
        throw new Error('AccessDeniedException');
      },
    });
    const body = clickBody('acknowledge');
    expect((await click(t, body, signed(body, T0))).statusCode).toBe(401);
    expect(t.lines.join('\n')).toContain('cannot read the app signing secret');
    expect(t.store.records.size).toBe(0);
    expect(t.updates).toEqual([]);
  });

  it('a click on a button that is not a triage action (a link button) is answered, and changes nothing', async () => {
    const t = setup();
    const payload = {
      type: 'block_actions',
      user: { id: 'U042', username: 'dana' },
      actions: [{ action_id: 'open_triage_page', url: 'https://example.com/triage/x' }],
      container: { channel_id: 'C0123ABCD', message_ts: '1700000000.000100' },
    };
    const body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    const answer = await click(t, body, signed(body, T0));
    expect(answer).toMatchObject({ statusCode: 200, body: '' });
    expect(t.store.records.size).toBe(0);
    expect(t.updates).toEqual([]);
    expect(t.metrics.points).toEqual([]);
  });

  it('the signing secret never appears in logs or answers', async () => {
    const t = setup();
    const body = clickBody('acknowledge');
    const answers = [await click(t, body, signed(body, T0)), await click(t, body, signed(body, T0, 'x'))];
    expect(JSON.stringify([answers, t.lines, t.metrics.points])).not.toContain(SIGNING_SECRET);
  });
});

describe('snooze', () => {
  it('holds for 24 hours and then ends on its own', async () => {
    const t = setup();
    const body = clickBody('snooze');
    await click(t, body, signed(body, T0));
    const state = t.store.records.get(ANOMALY)?.triage;
    if (!state) throw new Error('the click recorded no state');
    expect(effectiveState(state, T0 / 1000 + SNOOZE_SECONDS - 1).state).toBe('snoozed');
    expect(effectiveState(state, T0 / 1000 + SNOOZE_SECONDS).state).toBe('open');
  });
});

describe("npm start's triage store", () => {
  it('reads where an anomaly’s opening is from the in-memory ledger, as the table’s one item holds both', async () => {
    const ledger = inMemoryLedger(() => T0);
    const store = memoryTriageStore(
      () => T0,
      (id) => ledger.anomalies.get(id)?.opening,
    );
    await store.apply(ANOMALY, 'acknowledge', 'dana', T0 / 1000);
    expect((await store.read(ANOMALY))?.opening).toBeUndefined();
    await ledger.anomalyOpened(ANOMALY, { channel: 'FIN', ts: 'FIN-24' });
    expect(await store.read(ANOMALY)).toMatchObject({ triage: { state: 'acknowledged' }, opening: { channel: 'FIN', ts: 'FIN-24' } });
    expect(await store.read('anomaly#none')).toBeUndefined();
  });

  it('keeps a replay key through its last second, and frees it after, as the table does', async () => {
    let nowMs = T0;
    const store = memoryTriageStore(() => nowMs);
    const until = T0 / 1000 + 300;
    expect(await store.firstUse('slack-request#1', until)).toBe(true);
    nowMs = until * 1000;
    expect(await store.firstUse('slack-request#1', until)).toBe(false);
    nowMs += 1_000;
    expect(await store.firstUse('slack-request#1', until + 300)).toBe(true);
  });
});

describe('triage page', () => {
  const page = (t: ReturnType<typeof setup>, method: string, token: string, body = '') =>
    t.handle({ method, path: `/triage/${token}`, headers: {}, body }, budgetOf(10_000));

  it('GET shows the anomaly, escaped, with strict headers, and changes nothing', async () => {
    const t = setup();
    const answer = await page(t, 'GET', pageToken());
    expect(answer.statusCode).toBe(200);
    expect(answer.body).toContain('EC2 &lt;script&gt;alert(1)&lt;/script&gt; spend');
    expect(answer.body).not.toContain('<script>');
    expect(answer.body).toContain('123456789012');
    expect(answer.headers['content-security-policy']).toContain("default-src 'none'");
    expect(answer.headers['referrer-policy']).toBe('no-referrer');
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(t.store.records.size).toBe(0);
    expect(t.followUps).toEqual([]);
  });

  it('POST applies the action with the name typed, posts the follow-up and shows the history', async () => {
    const t = setup();
    const answer = await page(t, 'POST', pageToken(), 'action=acknowledge&name=Dana');
    expect(answer.statusCode).toBe(200);
    expect(t.store.records.get(ANOMALY)?.triage).toMatchObject({ state: 'acknowledged', by: 'Dana' });
    // Who and when also as data, for a kind whose notes are data (an event's detail).
    expect(t.followUps).toEqual([
      {
        destination: 'finops',
        text: 'Acknowledged by Dana at 2026-11-24T09:00:00Z',
        by: 'Dana',
        at: Date.parse('2026-11-24T09:00:00Z') / 1000,
      },
    ]);
    expect(answer.body).toContain('Acknowledged by Dana');
    // Counted by the chat the link came from, as the Slack buttons are counted under slack.
    expect(t.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'teams' })).toBe(1);
  });

  it('a POST hands the follow-up the link it came through, on the origin it came in on, and nothing without one', async () => {
    const links: Array<string | undefined> = [];
    const t = setup({ postFollowUp: async (_token, note) => void links.push(note.link) });
    const token = pageToken();
    const path = `/triage/${token}`;
    await t.handle(
      { method: 'POST', path, headers: {}, body: 'action=expected&name=Dana', origin: 'https://api.example.org' },
      budgetOf(10_000),
    );
    await page(t, 'POST', token, 'action=reopen&name=Dana');
    // A reopened alert links back to its page, as the alert the relay posted did.
    expect(links).toEqual([`https://api.example.org${path}`, undefined]);
  });

  it('a POST that repeats the state changes and posts nothing, however often it comes; the audit keeps the last entries', async () => {
    const t = setup();
    expect((await page(t, 'POST', pageToken(), 'action=acknowledge&name=Dana')).statusCode).toBe(200);
    for (let i = 0; i < 50; i++) {
      const answer = await page(t, 'POST', pageToken(), 'action=acknowledge&name=Mallory');
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain('Nothing changed');
    }
    expect(t.followUps).toHaveLength(1);
    expect(t.store.records.get(ANOMALY)?.audit).toHaveLength(1);
    expect(t.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'teams' })).toBe(1);
    // Real changes, one after another, keep only the latest entries.
    for (let i = 0; i < 60; i++) {
      t.advance(1_000);
      await page(t, 'POST', pageToken(t.now()), `action=${i % 2 === 0 ? 'reopen' : 'acknowledge'}&name=Dana`);
    }
    const audit = t.store.records.get(ANOMALY)?.audit ?? [];
    expect(audit).toHaveLength(AUDIT_KEPT);
    expect(audit.at(-1)).toMatchObject({ action: 'acknowledge', at: t.now() / 1000 });
  });

  it('a token that is not even a well-formed path is refused with 403, not an error', async () => {
    const t = setup();
    for (const path of ['/triage/%E0%A4%A', '/triage/%', '/triage/']) {
      const answer = await t.handle({ method: 'GET', path, headers: {}, body: '' }, budgetOf(1_000));
      expect(answer.statusCode).toBe(403);
    }
    expect(t.lines.join('\n')).not.toMatch(/"level":"error"/);
  });

  it('a hostile name is stored as text and escaped on the page', async () => {
    const t = setup();
    const name = '<img src=x onerror=alert(1)>"\'&';
    const answer = await page(t, 'POST', pageToken(), `action=expected&name=${encodeURIComponent(name)}`);
    expect(answer.body).not.toContain('<img');
    expect(answer.body).toContain(escapeHtml(name));
  });

  it('without a name the action is by "someone"; an unknown action is refused', async () => {
    const t = setup();
    await page(t, 'POST', pageToken(), 'action=snooze');
    expect(t.store.records.get(ANOMALY)?.triage.by).toBe('someone');
    expect((await page(t, 'POST', pageToken(), 'action=delete')).statusCode).toBe(400);
  });

  it('a chat that cannot take the follow-up is said so on the page', async () => {
    const t = setup({ postFollowUp: async () => Promise.reject(new Error('down')) });
    const answer = await page(t, 'POST', pageToken(), 'action=acknowledge');
    expect(answer.body).toContain('the destination could not be told');
  });

  it.each([
    ['tampered', () => pageToken().replace(/^./, (c) => (c === 'e' ? 'f' : 'e'))],
    ['signed with another key', () => pageToken(T0, 'x'.repeat(64))],
    ['expired', () => pageToken(T0 - 31 * 86_400_000)],
    ['malformed', () => 'not-a-token'],
  ])('a %s token gets 403 and changes nothing', async (_name, token) => {
    const t = setup();
    for (const method of ['GET', 'POST']) {
      const answer = await page(t, method, token(), 'action=acknowledge');
      expect(answer.statusCode).toBe(403);
    }
    expect(t.store.records.size).toBe(0);
    expect(t.followUps).toEqual([]);
  });

  it('without a key, /triage answers 404; other paths 404', async () => {
    const t = setup({ tokenKey: async () => undefined });
    expect((await page(t, 'GET', pageToken())).statusCode).toBe(404);
    expect((await t.handle({ method: 'GET', path: '/other', headers: {}, body: '' }, budgetOf(1000))).statusCode).toBe(404);
  });

  it('a key that cannot be read answers 503 and tells the operator, never with the error’s text', async () => {
    const t = setup({
      tokenKey: async () => {
        throw new Error('secret arn:aws:secretsmanager:us-east-1:123456789012:secret:triage-key is unreadable');
      },
    });
    const answer = await page(t, 'GET', pageToken());
    expect(answer.statusCode).toBe(503);
    expect(answer.body).not.toContain('arn:aws');
    expect(t.lines.join('\n')).toContain('cannot read the triage key');
  });

  it('an action whose destination cannot be looked up is still counted, under an unknown type', async () => {
    const t = setup({ destinationTypeOf: async () => Promise.reject(new Error('configuration unreadable')) });
    expect((await page(t, 'POST', pageToken(), 'action=acknowledge&name=Dana')).statusCode).toBe(200);
    expect(t.store.records.get(ANOMALY)?.triage.state).toBe('acknowledged');
    expect(t.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'unknown' })).toBe(1);
  });

  it('GET /chart/<token> goes to the picture route with the token decoded; without a route, or by POST, it is 404', async () => {
    const asked: string[] = [];
    const chart: NonNullable<TriagePorts['chart']> = async (token) => {
      asked.push(token);
      return { statusCode: 200, headers: { 'content-type': 'image/png' }, body: 'iVBORw0KGgo=', isBase64Encoded: true };
    };
    const t = setup({ chart });
    const answer = await t.handle({ method: 'GET', path: '/chart/abc%2Edef', headers: {}, body: '' }, budgetOf(3_000));
    expect(answer).toMatchObject({ statusCode: 200, headers: { 'content-type': 'image/png' } });
    expect(asked).toEqual(['abc.def']);
    expect((await t.handle({ method: 'POST', path: '/chart/abc', headers: {}, body: '' }, budgetOf(3_000))).statusCode).toBe(404);
    const without = setup();
    expect((await without.handle({ method: 'GET', path: '/chart/abc', headers: {}, body: '' }, budgetOf(3_000))).statusCode).toBe(404);
    expect(asked).toHaveLength(1);
  });

  it('Expected asks for a cost event dated the anomaly’s first sighting, or today where the table cannot say', async () => {
    const asked: Array<{ change: string; subjects: readonly CostEventSubject[] }> = [];
    const costEvents: NonNullable<TriagePorts['costEvents']> = {
      enabled: async () => true,
      apply: async (change, subjects) => {
        asked.push({ change, subjects });
      },
    };
    const t = setup({ costEvents });
    const read = t.store.read;
    let failed = false;
    t.store.read = async (...args) => {
      if (failed) return read(...args);
      failed = true;
      throw new Error('ProvisionedThroughputExceededException');
    };
    expect((await page(t, 'POST', pageToken(), 'action=expected&name=Dana&note=load%20test')).statusCode).toBe(200);
    expect(asked).toEqual([
      {
        change: 'write',
        subjects: [
          {
            title: 'EC2 <script>alert(1)</script> spend',
            account: '123456789012',
            destination: 'finops',
            by: 'Dana',
            note: 'load test',
            day: '2026-11-24',
          },
        ],
      },
    ]);
    // A reopen deletes it, and carries no note.
    await page(t, 'POST', pageToken(), 'action=reopen&name=Dana&note=ignored');
    expect(asked[1]).toMatchObject({ change: 'delete', subjects: [{ by: 'Dana', day: '2026-11-24' }] });
    expect(asked[1]?.subjects[0]).not.toHaveProperty('note');
  });

  it('a cost event that fails in every way, or a setting that cannot be read, never costs the action its answer', async () => {
    const failing = setup({
      costEvents: {
        enabled: async () => true,
        apply: async () => {
          throw new Error('the platform client could not be loaded');
        },
      },
    });
    const answer = await page(failing, 'POST', pageToken(), 'action=expected&name=Dana');
    expect(answer.statusCode).toBe(200);
    expect(failing.store.records.get(ANOMALY)?.triage.state).toBe('expected');
    expect(failing.lines.join('\n')).toContain('cost event neither written nor queued');

    let applied = 0;
    const unreadable = setup({
      costEvents: {
        enabled: async () => Promise.reject(new Error('configuration unreadable')),
        apply: async () => {
          applied++;
        },
      },
    });
    const shown = await page(unreadable, 'POST', pageToken(), 'action=expected&name=Dana');
    expect(shown.statusCode).toBe(200);
    expect(unreadable.store.records.get(ANOMALY)?.triage.state).toBe('expected');
    expect(applied).toBe(0);
    // Without the setting, the page offers no note field.
    expect(shown.body).not.toContain('name="note"');
  });

  it('a failing table answers 503, never with a secret', async () => {
    const t = setup({
      store: {
        read: async () => Promise.reject(new Error('boom')),
        apply: async () => ({ kind: 'unchanged' }),
        firstUse: async () => true,
      },
    });
    const answer = await page(t, 'GET', pageToken());
    expect(answer.statusCode).toBe(503);
    expect(JSON.stringify([answer, t.lines])).not.toContain(TOKEN_KEY);
  });
});

describe('tokens', () => {
  it('name one anomaly at one destination and expire after 30 days', () => {
    const token = pageToken();
    expect(verifyTriageToken(TOKEN_KEY, token, T0 + 29 * 86_400_000)).toMatchObject({ ok: true, token: { a: ANOMALY, d: 'finops' } });
    expect(verifyTriageToken(TOKEN_KEY, token, T0 + 30 * 86_400_000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('never contain the key', () => {
    expect(pageToken()).not.toContain(TOKEN_KEY);
  });
});

describe('page rendering', () => {
  it('shows a snooze with its end and the history', () => {
    const html = renderTriagePage({
      title: 'T',
      account: 'A',
      destination: 'finops',
      nowSeconds: 100,
      record: { triage: { state: 'snoozed', until: 200, by: 'x' }, audit: [{ who: 'x', action: 'snooze', at: 100 }] },
    });
    expect(html).toContain('Snoozed by x until 1970-01-01T00:03:20Z');
    expect(html).toContain('snooze by x');
  });

  it('names the destination whose triage it is, as text: two pages for one anomaly at two channels tell apart', () => {
    const page = (destination: string) => renderTriagePage({ title: 'T', account: 'A', destination, nowSeconds: 100, record: undefined });
    expect(page('finops-aws')).toContain('<dt>Destination</dt><dd id="destination">finops-aws</dd>');
    expect(page('<b>ops</b> & "x"')).toContain('<dd id="destination">&lt;b&gt;ops&lt;/b&gt; &amp; &quot;x&quot;</dd>');
  });
});

describe('follow-ups per destination', () => {
  const note = (line: string, opening?: { channel: string; ts: string }) => ({
    action: 'acknowledge' as const,
    line,
    by: 'Dana',
    at: 1_795_000_000,
    destination: 'finops',
    anomalyId: ANOMALY,
    thread: 'cost-alert-abc',
    ...(opening ? { opening } : {}),
  });
  /** What the kind posts where: the payload its triage note is, and the address its service posts it to. */
  const followUpRequest = async (destination: Destination, line: string, opening?: { channel: string; ts: string }) => ({
    address: addressOf(destination),
    body: (await kindOf(destination).extras()).triageNote(destination as never, note(line, opening)) as Record<string, unknown>,
  });
  it('Google Chat replies in the anomaly thread', async () => {
    const request = await followUpRequest({ url: 'https://chat.googleapis.com/v1/spaces/S/messages?key=k&token=t' }, 'Acknowledged');
    expect(threadedUrl(request.address)).toContain('messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD');
    expect(request.body).toEqual({ text: 'Acknowledged', thread: { threadKey: 'cost-alert-abc' } });
  });
  it('a Slack app destination replies in the opening thread', async () => {
    const request = await followUpRequest({ channel: 'C0123ABCD' }, 'Acknowledged', { channel: 'C0123ABCD', ts: '1.2' });
    expect(request).toMatchObject({
      body: { call: 'chat.postMessage', body: { channel: 'C0123ABCD', thread_ts: '1.2', text: 'Acknowledged' } },
    });
    expect(JSON.stringify(request)).not.toContain(BOT_TOKEN);
  });
  it('Teams gets a card, a Slack webhook plain text', async () => {
    expect(JSON.stringify((await followUpRequest({ url: 'https://x.logic.azure.com/workflows/1', type: 'teams' }, 'Hi')).body)).toContain(
      'AdaptiveCard',
    );
    expect((await followUpRequest({ url: 'https://hooks.slack.com/services/T/B/C' }, 'Hi')).body).toEqual({ text: 'Hi' });
  });
  it('a hostile typed name pings, links and calls nothing in any chat', async () => {
    const line = triageLine('acknowledge', triageName('<!channel> <@U1> [x](https://evil.example) {{DATE(2026-01-01T00:00:00Z)}}'), 1);
    const body = async (destination: Destination) => JSON.stringify((await followUpRequest(destination, line)).body);
    for (const slack of [await body({ url: 'https://hooks.slack.com/services/T/B/C' }), await body({ channel: 'C0123ABCD' })]) {
      expect(slack).toContain('Acknowledged by');
      expect(slack).not.toMatch(/<!channel>|<@U1>|<https?:/);
    }
    expect(await body({ url: 'https://chat.googleapis.com/v1/spaces/S/messages?key=k' })).not.toMatch(/[<>]/);
    const teams = await body({ url: 'https://x.logic.azure.com/workflows/1', type: 'teams' });
    expect(teams).not.toMatch(/\[x\]\(|\{\{DATE|<!channel>/);
  });
});

describe('what a chat, a browser and an operator get from the triage function', () => {
  const page = (t: ReturnType<typeof setup>, method: string, token: string, body = '') =>
    t.handle({ method, path: `/triage/${token}`, headers: {}, body }, budgetOf(10_000));

  it('a click replayed in the last second its signature is good for is still refused', async () => {
    const t = setup();
    const body = clickBody('snooze');
    const headers = signed(body, T0);
    expect((await click(t, body, headers)).statusCode).toBe(200);
    t.advance(300_000);
    expect((await click(t, body, headers)).statusCode).toBe(401);
    expect(t.lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ message: 'refused an app interaction', reason: 'replayed' }),
    );
    expect(t.store.records.get(ANOMALY)?.audit).toHaveLength(1);
  });

  it('a refused link is answered as plain text that no cache keeps and no referrer carries on', async () => {
    const t = setup();
    const answer = await page(t, 'GET', `${pageToken()}x`);
    expect(answer).toEqual({
      statusCode: 403,
      headers: { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
      body: 'This link is not valid or has expired.',
    });
    expect(t.lines.map((line) => JSON.parse(line))).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'refused a triage link', reason: 'bad_signature' }),
    );
  });

  it('each click is logged as operations.md names it: an action with its destination type, a refusal with its reason', async () => {
    const t = setup();
    const body = clickBody('acknowledge');
    expect(await click(t, body, signed(clickBody('expected'), T0))).toMatchObject({ statusCode: 401, body: 'Signature refused.' });
    await click(t, body, signed(body, T0));
    const logged = t.lines.map((line) => JSON.parse(line));
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'warn', message: 'refused an app interaction', reason: 'bad_signature' }),
    );
    expect(logged).toContainEqual(
      expect.objectContaining({ level: 'info', message: 'triage action', action: 'acknowledge', destinationType: 'slack' }),
    );
  });

  it('a GET of the app’s click path is not found', async () => {
    const t = setup();
    const answer = await t.handle({ method: 'GET', path: KINDS.slack.interactionPath, headers: {}, body: '' }, budgetOf(3_000));
    expect(answer.statusCode).toBe(404);
  });

  it('the note typed for Expected reaches the cost event trimmed and cut to its limit; none typed, none sent', async () => {
    const notes: Array<string | undefined> = [];
    const t = setup({
      costEvents: {
        enabled: async () => true,
        apply: async (_change, subjects) => void notes.push(subjects[0]?.note),
      },
    });
    await page(t, 'POST', pageToken(), `action=expected&name=Dana&note=${encodeURIComponent(`  ${'x'.repeat(600)}  `)}`);
    await page(t, 'POST', pageToken(), 'action=reopen&name=Dana');
    await page(t, 'POST', pageToken(), 'action=expected&name=Dana');
    await page(t, 'POST', pageToken(), 'action=reopen&name=Dana');
    await page(t, 'POST', pageToken(), `action=expected&name=Dana&note=${encodeURIComponent('  load test  ')}`);
    expect(notes).toEqual(['x'.repeat(500), undefined, undefined, undefined, 'load test']);
  });
});
