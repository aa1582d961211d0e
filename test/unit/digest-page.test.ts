// The triage page of a digest, through the triage handler's ports: which anomalies an action
// changes, what the page and the follow-up say, and how many writes go out at once.
// test/unit/digest-triage.test.ts runs the whole storm (grouping, closing, escalation) around it.

import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CostEventChange, CostEventSubject } from '../../lib/cost-events/events.js';
import { createLogger } from '../../lib/log/logger.js';
import { createTriageHandler, type TriagePorts } from '../../lib/triage/handle.js';
import { memoryTriageStore } from '../../lib/triage/store.js';
import { signDigestToken } from '../../lib/triage-link/sign.js';
import { budgetOf } from '../helpers/budget.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';

const KEY = 'digest-page-test-key-0123456789abcdefghijklmnopqrstuvwxyz';
const T0 = Date.UTC(2026, 10, 28, 9);
const idOf = (n: number) => `anomaly#${createHash('sha256').update(String(n)).digest('hex')}`;

function setup(count: number, options: { account?: (n: number) => string; costEvents?: boolean } = {}) {
  const store = memoryTriageStore(() => T0);
  const metrics = memoryMetrics();
  const lines: string[] = [];
  const notes: string[] = [];
  const costEvents: Array<{ change: CostEventChange; subjects: readonly CostEventSubject[] }> = [];
  let inFlight = 0;
  let mostInFlight = 0;
  const apply = store.apply;
  store.apply = async (...args) => {
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    // Each write takes a turn of the event loop, as a table's answer would.
    await new Promise((resolve) => setImmediate(resolve));
    try {
      return await apply(...args);
    } finally {
      inFlight--;
    }
  };
  const ports: TriagePorts = {
    tokenKey: async () => KEY,
    interactionsAt: () => undefined,
    store,
    postAsApp: async () => {},
    postFollowUp: async (_token, note) => void notes.push(note.line),
    destinationTypeOf: async () => 'teams',
    metrics,
    logger: createLogger({ sink: (line) => lines.push(line) }),
    now: () => T0,
    ...(options.costEvents
      ? { costEvents: { enabled: async () => true, apply: async (change, subjects) => void costEvents.push({ change, subjects }) } }
      : {}),
  };
  const handle = createTriageHandler(ports);
  const anomalies = Array.from({ length: count }, (_, i) => ({
    anomalyId: idOf(i),
    title: `Spend spike ${i}`,
    account: options.account ? options.account(i) : `12345678901${i % 10}`,
  }));
  const token = signDigestToken(KEY, { destination: 'finops', anomalies }, T0);
  const post = (action: string) =>
    handle(
      { method: 'POST', path: `/triage/${token}`, headers: {}, body: `action=${encodeURIComponent(action)}&name=Dana` },
      budgetOf(10_000),
    );
  const state = (i: number) => store.records.get(idOf(i))?.triage.state ?? 'open';
  return { handle, store, metrics, lines, notes, costEvents, post, state, token, mostInFlight: () => mostInFlight };
}

const noticeOf = (body: string) => body.match(/<p role="status"><strong>(.*?)<\/strong><\/p>/)?.[1];

describe('a digest’s page', () => {
  it('an action on all open of a long digest changes each, writing at most ten side by side, and says how many', async () => {
    const d = setup(23);
    expect((await d.post('acknowledge:all')).statusCode).toBe(200);
    expect(Array.from({ length: 23 }, (_, i) => d.state(i)).every((s) => s === 'acknowledged')).toBe(true);
    expect(d.mostInFlight()).toBe(10);
    expect(d.notes).toEqual([expect.stringMatching(/^Acknowledged by Dana at .*: 23 anomalies of a digest$/)]);
    expect(d.metrics.count('TriageActions', { action: 'acknowledge', destinationType: 'teams' })).toBe(23);
    expect(d.lines.map((l) => JSON.parse(l)).find((l) => l.message === 'triage action')).toMatchObject({
      action: 'acknowledge',
      destinationType: 'teams',
      anomalies: 23,
    });
  });

  it('one anomaly left open is named as one', async () => {
    const d = setup(3);
    await d.post('expected:0');
    await d.post('snooze:2');
    const answer = await d.post('acknowledge:all');
    expect(d.notes.at(-1)).toMatch(/: 1 anomaly of a digest$/);
    expect(noticeOf(answer.body)).toMatch(/: 1 anomaly of a digest$/);
    expect([d.state(0), d.state(1), d.state(2)]).toEqual(['expected', 'acknowledged', 'snoozed']);
    // A single action is logged without a count.
    const logged = d.lines.map((l) => JSON.parse(l)).filter((l) => l.message === 'triage action');
    expect(logged.map((l) => l.anomalies)).toEqual([undefined, undefined, undefined]);
  });

  it('an anomaly past the tenth is acted on by its place; a place that is not a whole number is refused', async () => {
    const d = setup(12);
    expect((await d.post('acknowledge:11')).statusCode).toBe(200);
    expect(d.state(11)).toBe('acknowledged');
    for (const action of ['acknowledge:1x', 'acknowledge:12', 'acknowledge:', 'reopen:all']) {
      expect((await d.post(action)).statusCode, action).toBe(400);
    }
    expect(d.store.records.size).toBe(1);
  });

  it('one anomaly someone decided can be reopened from the digest, and says so; a repeat says nothing changed', async () => {
    const d = setup(2);
    await d.post('acknowledge:1');
    const reopened = await d.post('reopen:1');
    expect(reopened.statusCode).toBe(200);
    expect(d.state(1)).toBe('open');
    expect(d.notes.at(-1)).toMatch(/^Reopened by Dana at .*: Spend spike 1 · 123456789011$/);
    expect(noticeOf((await d.post('reopen:1')).body)).toBe('Nothing changed: the anomaly is already in that state.');
    await d.post('acknowledge:all');
    expect(noticeOf((await d.post('acknowledge:all')).body)).toBe('Nothing changed: no anomaly of this digest is open.');
  });

  it('an action posted without a name is by someone', async () => {
    const d = setup(1);
    await d.handle({ method: 'POST', path: `/triage/${d.token}`, headers: {}, body: 'action=snooze%3A0' }, budgetOf(10_000));
    expect(d.store.records.get(idOf(0))?.triage.by).toBe('someone');
  });

  it('an anomaly without an account is named by its title alone', async () => {
    const d = setup(2, { account: () => '' });
    await d.post('acknowledge:0');
    expect(d.notes).toEqual([expect.stringMatching(/: Spend spike 0$/)]);
  });

  it('only Expected and Reopen reach the platform as cost events', async () => {
    const d = setup(2, { costEvents: true });
    await d.post('acknowledge:0');
    await d.post('snooze:1');
    expect(d.costEvents).toEqual([]);
    await d.post('reopen:0');
    await d.post('expected:0');
    expect(d.costEvents.map((e) => [e.change, e.subjects.map((s) => s.title)])).toEqual([
      ['delete', ['Spend spike 0']],
      ['write', ['Spend spike 0']],
    ]);
  });

  it('a method other than GET or POST on a page is not found', async () => {
    const d = setup(1);
    expect((await d.handle({ method: 'PUT', path: `/triage/${d.token}`, headers: {}, body: '' }, budgetOf(3_000))).statusCode).toBe(404);
    expect((await d.handle({ method: 'DELETE', path: `/triage/${d.token}`, headers: {}, body: '' }, budgetOf(3_000))).statusCode).toBe(404);
  });
});
