// The contract every destination kind keeps, run against each kind the registry holds: a kind
// gets this suite by registering (lib/notify/kinds.ts). Each kind posts, through its own
// services, to a loopback server that plays its service (Conformance in lib/notify/kind.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EscalationMark, OPENING, type PostOutcome } from '../../lib/chat/service.js';
import { destinationSchema } from '../../lib/config/schema.js';
import type { SummaryAnomaly, SummaryWeek } from '../../lib/format/summary.js';
import { type WebhookMessage, webhookMessageSchema } from '../../lib/message/schema.js';
import type { DestinationKind, KindTools } from '../../lib/notify/kind.js';
import {
  addressOf,
  createChatServices,
  DESTINATION_TYPES,
  type DestinationType,
  KINDS,
  kindOf,
  serviceFor,
} from '../../lib/notify/kinds.js';
import { toolsOf } from '../../lib/notify/tools.js';
import { fetchOverNodeHttp } from '../../lib/transport/fetch-over-node-http.js';
import { closeServer } from '../helpers/loopback-server.js';

/** How the loopback service answers the next post. */
type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'hang';

interface Played {
  url: string;
  answer: Answer;
  received: Array<{ path: string; body: string }>;
  close(): Promise<void>;
}

async function playService(): Promise<Played> {
  const hanging: ServerResponse[] = [];
  const played: Omit<Played, 'url' | 'close'> = { answer: { status: 200 }, received: [] };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      played.received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      const { answer } = played;
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(played, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => closeServer(server, hanging),
  });
}

// What a sender may put in an alert to ping, link, format or reorder what a reader sees.
const HOSTILE = {
  title: '<!channel> @here <users/all> *bold* _it_ ~st~ `code` [x](https://evil.example) \u202E00.001$',
  message: '<https://evil.example|click> <@U0123> www.evil.example :zap: > quote #general ||spoiler|| \u2066A\u2069',
  account: '<!here> *acct*',
};
// None of these may reach a person as written: each would ping, link, format or reverse text in
// every chat. (A Markdown link `[x](…)` is live in Teams alone, which its own tests hold.)
const LIVE = [
  '<!channel>',
  '<!here>',
  '@here',
  '<users/all>',
  '<@U0123>',
  '*bold*',
  '_it_',
  '~st~',
  '`code`',
  'https://evil',
  'www.evil.example',
  '\u202E',
  '\u2066',
];

const hostileAlert = webhookMessageSchema.parse({
  metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z' },
  payload: {
    title: HOSTILE.title,
    message: HOSTILE.message,
    account_id: '123456789012',
    account_name: HOSTILE.account,
    cloud_provider_type: 'aws',
  },
});
// As large as the relay accepts, of what escaping makes longer: entities, card functions, lone surrogates.
const hugeAlert = webhookMessageSchema.parse({
  metadata: { object_type: 'anomaly_alert', timestamp: '2026-11-26T09:00:00Z' },
  payload: { title: `${'<&>{{'.repeat(200)}\uD800`, message: `${'&<>{{\uDC00*_'.repeat(7_000)}`, account_id: '1'.repeat(400) },
});
const LINK = 'https://api.example.com/triage/contract-token';
// Named by the platform's owners, yet text from elsewhere: a bidi control must not reorder it anywhere.
const COST_CENTERS = [{ id: 'cc-42', name: 'Data \u202EPlatform\u202C' }];

// A long week of hostile text in every field a sender or a person fills: each anomaly's title
// carries its number (A0001…), so that what a summary names can be counted.
const WEEK_END = Date.parse('2026-11-23T08:00:00Z') / 1000;
const STATES = ['open', 'open', 'acknowledged', 'expected', 'snoozed'] as const;
const longWeek = (count: number): SummaryWeek => {
  const anomalies: SummaryAnomaly[] = Array.from({ length: count }, (_, i) => {
    const state = STATES[i % STATES.length] ?? 'open';
    return {
      id: `anomaly#${String(i).padStart(64, '0')}`,
      title: `A${String(i).padStart(4, '0')} ${HOSTILE.title} ${'&<>{{'.repeat(20)}`,
      account: HOSTILE.account,
      accountId: '123456789012',
      firstSeen: WEEK_END - 3_600 * (i + 1),
      updates: i % 4,
      state,
      ...(state === 'open' ? { link: `${LINK}-${i}` } : { by: HOSTILE.message, at: WEEK_END - 60, until: WEEK_END + 3_600 }),
    };
  }).sort((a, b) => Number(b.state === 'open') - Number(a.state === 'open'));
  const counts = { open: 0, acknowledged: 0, expected: 0, snoozed: 0 };
  for (const anomaly of anomalies) counts[anomaly.state] += 1;
  return { destination: 'finops', from: WEEK_END - 7 * 86_400, to: WEEK_END, asOf: WEEK_END, timeZone: 'Europe/Berlin', counts, anomalies };
};
const quietWeek: SummaryWeek = {
  destination: 'finops',
  from: WEEK_END - 7 * 86_400,
  to: WEEK_END,
  asOf: WEEK_END,
  timeZone: 'UTC',
  counts: { open: 0, acknowledged: 0, expected: 0, snoozed: 0 },
  anomalies: [],
};
const SUMMARY_TYPES = DESTINATION_TYPES.filter((type) => KINDS[type].summaries);
/** Every value in a tree of JSON, objects and arrays included: where a kind read by programs carries something. */
const valuesIn = (value: unknown): unknown[] =>
  Array.isArray(value)
    ? [value, ...value.flatMap(valuesIn)]
    : typeof value === 'object' && value !== null
      ? [value, ...Object.values(value).flatMap(valuesIn)]
      : [value];
const readByPrograms = (type: DestinationType) => KINDS[type].readBy === 'programs';
/** The data a program gets of each body, for a kind read by programs (Conformance.data). */
const dataOf = (type: DestinationType, bodies: string[]): unknown[] => {
  const { data } = (tools[type] as KindTools).conformance;
  if (!data) throw new Error(`${type} is read by programs, and its conformance names no data`);
  return bodies.map((body) => data(JSON.parse(body)));
};

const tools: Partial<Record<string, KindTools>> = {};
beforeAll(async () => {
  for (const type of DESTINATION_TYPES) tools[type] = await toolsOf(type);
});

describe.each(DESTINATION_TYPES)('the %s kind keeps the destination-kind contract', (type) => {
  let service: Played;
  beforeAll(async () => {
    service = await playService();
  });
  afterAll(() => service.close());

  const variants = () => (tools[type] as KindTools).conformance.variants(service.url);

  /** One post of `message` as the kind formats and posts it, with the service answering `answer`. */
  async function post(
    variant: ReturnType<typeof variants>[number],
    message = hostileAlert,
    answer?: Answer,
    timeoutMs = 2_000,
    escalation?: EscalationMark,
  ) {
    const { conformance } = tools[type] as KindTools;
    service.answer = answer ?? { ...conformance.accepted };
    service.received.length = 0;
    const { destination } = variant;
    const kind = kindOf(destination) as DestinationKind;
    const chosen = serviceFor(createChatServices(fetchOverNodeHttp, variant.env), destination);
    const app = kind.app?.(destination, variant.app);
    const context = {
      anomalyId: `anomaly#${'c'.repeat(64)}`,
      destination: variant.name,
      costCenters: COST_CENTERS,
      ...(escalation ? { escalation } : {}),
    };
    const payload = chosen.format(message, destination as Readonly<Record<string, unknown>>, OPENING, { link: LINK }, context);
    const outcome = await chosen.post(addressOf(destination), payload, { timeoutMs, ...(app ? { botToken: app.botToken } : {}) });
    return { outcome, received: service.received.map((r) => r.body) };
  }

  it('is registered under its own type, and every variant is a destination of it that the configuration reads as one', () => {
    expect(KINDS[type].type).toBe(type);
    expect(DESTINATION_TYPES.filter((other) => other === type)).toHaveLength(1);
    for (const variant of variants()) {
      expect(kindOf(variant.destination).type, variant.name).toBe(type);
      // The configuration reads it through the kind's own schema: a schema whose `type` is spelt
      // otherwise than the kind's refuses every destination of the kind.
      const read = destinationSchema.safeParse(variant.destination);
      expect(read.success ? [] : read.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`), variant.name).toEqual([]);
      expect(read.success && kindOf(read.data).type, variant.name).toBe(type);
    }
  });

  it('shows hostile and bidirectional sender text as it reads, with nothing that pings, links or formats; programs get it as sent', async () => {
    for (const variant of variants()) {
      const { outcome, received } = await post(variant);
      expect(outcome, variant.name).toMatchObject({ kind: 'delivered' });
      expect(received.length, variant.name).toBeGreaterThan(0);
      const shown = received.flatMap((body) => (tools[type] as KindTools).conformance.shown(JSON.parse(body))).join('\n');
      if (readByPrograms(type)) {
        // Data for rules and code: nobody is shown anything, and the text is there exactly as the sender wrote it.
        expect(shown, variant.name).toBe('');
        expect(valuesIn(dataOf(type, received)), `${variant.name} carries the title as sent`).toContain(HOSTILE.title);
        continue;
      }
      expect(shown, `${variant.name} carries the alert`).toMatch(/bold/);
      for (const live of LIVE) expect(shown, `${variant.name} shows ${JSON.stringify(live)} as written`).not.toContain(live);
    }
  });

  it('carries the body as the platform sent it exactly where the kind passes it on (passesOnReceived); others the validated message', async () => {
    const marker = 'ONLY-IN-THE-BODY-AS-SENT';
    const received = {
      metadata: { object_type: 'anomaly_alert', platform_event_id: marker },
      payload: { title: HOSTILE.title, account_id: 123456789012, [marker]: null },
    };
    for (const variant of variants()) {
      const { outcome, received: bodies } = await post(variant, { ...hostileAlert, received } as WebhookMessage);
      expect(outcome, variant.name).toMatchObject({ kind: 'delivered' });
      // The contract's: a bus's detail and a webhook's data hold metadata and payload exactly as received.
      expect(bodies.join('\n').includes(marker), variant.name).toBe(Boolean((KINDS[type] as DestinationKind).passesOnReceived));
    }
  });

  it("names the account's cost centers, where the owner directory knows them, as cleaned as sender text (as data for programs)", async () => {
    const { conformance } = tools[type] as KindTools;
    for (const variant of variants()) {
      const { received } = await post(variant);
      if (readByPrograms(type)) {
        // As data, each with its id, as the directory has them.
        expect(valuesIn(dataOf(type, received)), variant.name).toContainEqual(COST_CENTERS);
        continue;
      }
      const shown = received.flatMap((body) => conformance.shown(JSON.parse(body))).join('\n');
      expect(shown, variant.name).toContain('Data Platform');
      expect(shown, variant.name).not.toMatch(/\p{Bidi_Control}/u);
    }
  });

  it('says an escalation: where the anomaly waited and for how long, inert where people read it, as data for programs', async () => {
    const { conformance } = tools[type] as KindTools;
    const shownOf = (received: string[]) => received.flatMap((body) => conformance.shown(JSON.parse(body))).join('\n');
    const from = 'finops <!here> *ops*';
    for (const variant of variants()) {
      const plain = await post(variant);
      const { outcome, received } = await post(variant, hostileAlert, undefined, 2_000, { from, afterMinutes: 90 });
      expect(outcome, variant.name).toMatchObject({ kind: 'delivered' });
      if (readByPrograms(type)) {
        // Data for rules and code: where it waited, as named, and the minutes it was given there.
        expect(valuesIn(dataOf(type, plain.received)), `${variant.name} without an escalation`).not.toContain(from);
        expect(valuesIn(dataOf(type, received)), variant.name).toEqual(expect.arrayContaining([from, 90]));
        continue;
      }
      expect(shownOf(plain.received), `${variant.name} without an escalation`).not.toContain('Not acknowledged');
      const shown = shownOf(received);
      expect(shown, variant.name).toMatch(/Not acknowledged at finops .*within 1 h 30 min/);
      for (const live of ['<!here>', '*ops*']) expect(shown, `${variant.name} shows ${live} as written`).not.toContain(live);
    }
  });

  it("stays within the service's size after its own escaping and encoding, and is taken", async () => {
    for (const variant of variants()) {
      const { outcome, received } = await post(variant, hugeAlert);
      expect(outcome, variant.name).toMatchObject({ kind: 'delivered' });
      for (const body of received) {
        expect(Buffer.byteLength(body), variant.name).toBeLessThanOrEqual((tools[type] as KindTools).conformance.maxBytes);
        expect(() => JSON.parse(body), variant.name).not.toThrow();
      }
    }
  });

  it('classifies answers: 2xx delivered; 4xx and a redirect refused; 429 and 503 retryable after Retry-After; 5xx and a hang retryable', async () => {
    const cases: Array<[Answer, Partial<PostOutcome>]> = [
      [{ status: 400, body: '{}' }, { kind: 'refused' }],
      [{ status: 401, body: '{}' }, { kind: 'refused' }],
      [{ status: 403, body: '{}' }, { kind: 'refused' }],
      [{ status: 404, body: '{}' }, { kind: 'refused' }],
      [
        { status: 302, headers: { location: 'https://elsewhere.example/' } },
        { kind: 'refused', reason: 'redirect_refused' },
      ],
      [
        { status: 429, headers: { 'retry-after': '7' }, body: '{}' },
        { kind: 'retryable', retryAfterMs: 7_000 },
      ],
      [{ status: 500, body: '{}' }, { kind: 'retryable' }],
      [{ status: 503, body: '{}' }, { kind: 'retryable' }],
      [
        { status: 503, headers: { 'retry-after': '5' }, body: '{}' },
        { kind: 'retryable', retryAfterMs: 5_000 },
      ],
      ['hang', { kind: 'retryable', reason: 'timeout' }],
    ];
    for (const variant of variants()) {
      for (const [answer, expected] of cases) {
        // Only the hang waits out its deadline; an answer gets the default, so a busy machine cannot turn it into a timeout.
        const { outcome } = await post(variant, hostileAlert, answer, answer === 'hang' ? 300 : undefined);
        expect(outcome, `${variant.name}: ${JSON.stringify(answer)}`).toMatchObject(expected);
      }
    }
  });

  it('names no secret in any outcome or reason', async () => {
    for (const variant of variants()) {
      const secrets = [
        ...(tools[type] as KindTools).conformance.secrets(variant.destination),
        ...(variant.app ? [variant.app.botToken] : []),
      ];
      const outcomes: PostOutcome[] = [];
      for (const answer of [
        { status: 400, body: JSON.stringify({ secrets }) },
        { status: 500, body: secrets.join(' ') },
        'hang' as const,
      ]) {
        outcomes.push((await post(variant, hostileAlert, answer, answer === 'hang' ? 300 : undefined)).outcome);
      }
      const told = JSON.stringify(outcomes);
      for (const secret of secrets) expect(told, variant.name).not.toContain(secret);
    }
  });
});

// Kinds whose summaries people read: every triaged line tells its times on the destination's clock.
// Making a date format costs far more than using one, and a layout builds its lines again on every
// try at fitting: a format made per line made a long week take seconds, time a run may not have.
// Timing it would depend on the machine, so what is counted is the formats made.
describe.each(SUMMARY_TYPES.filter((type) => !readByPrograms(type)))('the %s kind lays out a long weekly summary', (type) => {
  const Made = Intl.DateTimeFormat;
  let made = 0;
  beforeAll(() => {
    Intl.DateTimeFormat = class extends Made {
      constructor(...args: ConstructorParameters<typeof Made>) {
        super(...args);
        made++;
      }
    } as typeof Made;
  });
  afterAll(() => {
    Intl.DateTimeFormat = Made;
  });

  it('makes a date format once per time zone, not once per line, for a week of thousands of snoozed anomalies', async () => {
    const kind = KINDS[type] as DestinationKind;
    if (!kind.summaries) throw new Error(`${type} takes no summary`);
    const extras = await kind.extras();
    // Short lines, so that many fit; each tells two times on the destination's clock.
    const anomalies = Array.from({ length: 2_000 }, (_, i) => ({
      id: `anomaly#${i}`,
      title: `A${i}`,
      account: '1',
      accountId: '1',
      firstSeen: WEEK_END - 60 * (i + 1),
      updates: 0,
      state: 'snoozed' as const,
      by: 'Lee',
      at: WEEK_END - 60,
      until: WEEK_END + 3_600,
    }));
    const week = { ...quietWeek, timeZone: 'Europe/Berlin', counts: { ...quietWeek.counts, snoozed: 2_000 }, anomalies };
    for (const variant of (tools[type] as KindTools).conformance.variants('http://127.0.0.1:1')) {
      made = 0;
      const payload: unknown = extras.summary(variant.destination, week);
      // A Jira post is made when it is sent.
      const shown = JSON.stringify(typeof payload === 'function' ? payload() : payload);
      expect(shown, variant.name).toContain('A1 · 1 · Snoozed');
      // A date and a time of day, in the one zone.
      expect(made, variant.name).toBeLessThanOrEqual(2);
    }
  });
});

describe.each(SUMMARY_TYPES)('the %s kind lays out a weekly summary within its limits', (type) => {
  let service: Played;
  beforeAll(async () => {
    service = await playService();
  });
  afterAll(() => service.close());

  /** The kind's summary for each of its variants, posted through its own service to the loopback one. */
  async function postSummary(week: SummaryWeek) {
    const { conformance } = tools[type] as KindTools;
    const kind = KINDS[type] as DestinationKind;
    if (!kind.summaries) throw new Error(`${type} takes no summary`);
    const extras = await kind.extras();
    const posted: Array<{ name: string; outcome: PostOutcome; bodies: string[] }> = [];
    for (const variant of conformance.variants(service.url)) {
      service.answer = { ...conformance.accepted };
      service.received.length = 0;
      const chosen = serviceFor(createChatServices(fetchOverNodeHttp, variant.env), variant.destination);
      const app = kind.app?.(variant.destination, variant.app);
      const outcome = await chosen.post(addressOf(variant.destination), extras.summary(variant.destination, week), {
        timeoutMs: 2_000,
        ...(app ? { botToken: app.botToken } : {}),
      });
      posted.push({ name: variant.name, outcome, bodies: service.received.map((r) => r.body) });
    }
    return posted;
  }
  const shownIn = (bodies: string[]) => bodies.flatMap((body) => (tools[type] as KindTools).conformance.shown(JSON.parse(body)));
  /**
   * The anomalies a summary names (by the number each title carries) and how many it says it left
   * out: in the lines people read, or, for a kind read by programs, in its data (its records'
   * titles, and the count under `notShown`).
   */
  const namedIn = (bodies: string[]) => {
    if (readByPrograms(type)) {
      const values = valuesIn(dataOf(type, bodies));
      const titles = values.filter((value): value is string => typeof value === 'string');
      const notShown = values.flatMap((value) => {
        const count = (value as { notShown?: unknown } | null)?.notShown;
        return typeof count === 'number' ? [count] : [];
      });
      return { named: new Set(titles.flatMap((t) => [...(/^A(\d{4}) /.exec(t) ?? [])].slice(1))), hidden: notShown[0] ?? 0, values };
    }
    const shown = shownIn(bodies).join('\n');
    return {
      named: new Set([...shown.matchAll(/A(\d{4})/g)].map((m) => m[1])),
      hidden: Number(/… and (\d+) more not shown/.exec(shown)?.[1] ?? 0),
      values: [shown],
    };
  };

  it('a 500-anomaly week stays within the service’s size, names what fits, open ones first, and says how many are not shown', async () => {
    for (const { name, outcome, bodies } of await postSummary(longWeek(500))) {
      expect(outcome, name).toMatchObject({ kind: 'delivered' });
      expect(bodies, name).toHaveLength(1);
      for (const body of bodies) expect(Buffer.byteLength(body), name).toBeLessThanOrEqual((tools[type] as KindTools).conformance.maxBytes);
      const { named, hidden, values } = namedIn(bodies);
      expect(named.size, name).toBeGreaterThan(10);
      expect(named.size + hidden, `${name}: named ${named.size}, not shown ${hidden}`).toBe(500);
      // The counts: a line people read, or data.
      if (readByPrograms(type)) expect(values, name).toContainEqual({ open: 200, acknowledged: 100, expected: 100, snoozed: 100 });
      else expect(values.join('\n'), name).toContain('200 open, 100 acknowledged, 100 expected, 100 snoozed');
    }
  });

  it('shows hostile titles, accounts and triagers’ names as they read, with nothing that pings, links or formats; programs get them as kept', async () => {
    for (const { name, bodies } of await postSummary(longWeek(12))) {
      const shown = shownIn(bodies).join('\n');
      if (readByPrograms(type)) {
        // Data: nobody is shown anything, and every title is there as it was kept.
        expect(shown, name).toBe('');
        expect(valuesIn(dataOf(type, bodies)), name).toContain(longWeek(12).anomalies[0]?.title);
        continue;
      }
      expect(shown, name).toMatch(/bold/);
      for (const live of LIVE) expect(shown, `${name} shows ${JSON.stringify(live)} as written`).not.toContain(live);
    }
  });

  it('a quiet week is one line where people read it, data without an anomaly for programs', async () => {
    for (const { name, outcome, bodies } of await postSummary(quietWeek)) {
      expect(outcome, name).toMatchObject({ kind: 'delivered' });
      if (readByPrograms(type)) {
        // Data: the week, counted, and no anomaly.
        const values = valuesIn(dataOf(type, bodies));
        expect(values, name).toContainEqual({ open: 0, acknowledged: 0, expected: 0, snoozed: 0 });
        expect(bodies.join('\n'), name).not.toMatch(/A\d{4}/);
        continue;
      }
      const shown = new Set(shownIn(bodies).filter(Boolean));
      expect([...shown], name).toHaveLength(1);
      expect([...shown][0], name).toMatch(/^Weekly summary · finops: no anomalies in the 7 days to 23 Nov 2026\.$/);
      // Nor anything else a reader would see beside it (a card header, a counts line): every text
      // of words in what the service received is that line.
      const words = (value: unknown): string[] =>
        typeof value === 'string'
          ? /\s/.test(value)
            ? [value]
            : []
          : typeof value === 'object' && value
            ? Object.values(value).flatMap(words)
            : [];
      expect(new Set(bodies.flatMap((body) => words(JSON.parse(body)))), name).toEqual(shown);
    }
  });
});
