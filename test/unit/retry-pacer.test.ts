import { describe, expect, it } from 'vitest';
import { createPacer, pacedServices } from '../../lib/retry/pacer.js';
import { chatServices, fakeChatService } from '../helpers/fake-delivery-ports.js';
import { virtualClock } from '../helpers/timer-clock.js';

// The pacer decides how long a delivery-retry record waits for its webhook, and whether it goes
// back to the queue with a slot booked: these are the waits an operator sees between posts.
const KEY = 'https://hooks.slack.com/services/T0/B0/aaa';
const SECOND = 1_000;

describe('the pacer of one webhook (delivery-retry)', () => {
  it('a record that booked its slot finds it its own when it comes back; a newcomer goes after every booked slot', async () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    pacer.posted(KEY, SECOND);
    expect(pacer.book(KEY, SECOND, 'a')).toBe(1 * SECOND);
    expect(pacer.book(KEY, SECOND, 'b')).toBe(2 * SECOND);
    clock.advance(SECOND);
    expect(pacer.delayFor(KEY, 'a')).toBe(0);
    expect(pacer.delayFor(KEY)).toBe(2 * SECOND);
    // `a` takes its slot without waiting; it went back to the queue once, which was no attempt.
    expect(await clock.run(() => pacer.wait(KEY, SECOND, 'a'))).toBe(1);
    expect(clock.slept).toEqual([]);
    // `b` keeps the slot it booked, a second after `a`'s post; a newcomer goes after it.
    expect(pacer.delayFor(KEY, 'b')).toBe(SECOND);
    expect(pacer.delayFor(KEY)).toBe(2 * SECOND);
    expect(pacer.book(KEY, SECOND, 'b')).toBe(SECOND);
    expect(pacer.wentBack(KEY, 'b')).toBe(2);
    expect(pacer.wentBack(KEY, 'nobody')).toBe(0);
    // A post made elsewhere (an escalation, a digest part) moves no booked slot earlier.
    pacer.posted(KEY, SECOND);
    expect(pacer.delayFor(KEY)).toBe(2 * SECOND);
    // A record that never booked waits for the first slot nobody booked: after `b`'s.
    expect(await clock.run(() => pacer.wait(KEY, SECOND))).toBe(0);
    expect(clock.slept).toEqual([2 * SECOND]);
  });

  it('a Retry-After moves booked slots after the hold; a short hold moves none that is later', () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    pacer.posted(KEY, SECOND);
    expect(pacer.book(KEY, SECOND, 'a')).toBe(SECOND);
    expect(pacer.book(KEY, SECOND, 'b')).toBe(2 * SECOND);
    pacer.holdFor(KEY, 100);
    // A hold shorter than the booked slots leaves them, and the newcomer after them.
    expect(pacer.delayFor(KEY)).toBe(3 * SECOND);
    expect(pacer.book(KEY, SECOND, 'a')).toBe(SECOND);
    pacer.holdFor(KEY, 30 * SECOND);
    expect(pacer.delayFor(KEY, 'b')).toBe(30 * SECOND);
    expect(pacer.book(KEY, SECOND, 'b')).toBe(30 * SECOND);
    expect(pacer.book(KEY, SECOND, 'c')).toBe(31 * SECOND);
  });

  it('a hold on a webhook nobody posted to yet holds it', () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    expect(pacer.delayFor(KEY)).toBe(0);
    pacer.holdFor(KEY, 5 * SECOND);
    expect(pacer.delayFor(KEY)).toBe(5 * SECOND);
  });

  it("a slot booked more than five minutes ago is nobody's: its record comes back behind those who booked since", () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    pacer.posted(KEY, SECOND);
    expect(pacer.book(KEY, SECOND, 'a')).toBe(SECOND);
    clock.advance(6 * 60 * SECOND);
    expect(pacer.book(KEY, SECOND, 'c')).toBe(0);
    expect(pacer.book(KEY, SECOND, 'b')).toBe(SECOND);
    expect(pacer.book(KEY, SECOND, 'a')).toBe(2 * SECOND);
    // Its count of waits stays: those receives were no attempts.
    expect(pacer.wentBack(KEY, 'a')).toBe(2);
  });

  it('a slot booked five minutes ago to the millisecond is still its own', () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    pacer.posted(KEY, SECOND);
    expect(pacer.book(KEY, SECOND, 'a')).toBe(SECOND);
    clock.advance(SECOND + 5 * 60 * SECOND);
    expect(pacer.book(KEY, SECOND, 'c')).toBe(0);
    expect(pacer.book(KEY, SECOND, 'b')).toBe(SECOND);
    expect(pacer.book(KEY, SECOND, 'a')).toBe(0);
  });

  it("the count of a record's waits is kept an hour after it last booked or took its slot, then forgotten", async () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    pacer.posted(KEY, SECOND);
    pacer.book(KEY, SECOND, 'a');
    // It comes back late (SQS's visibility is coarse) and takes its slot 50 minutes after booking it.
    clock.advance(50 * 60 * SECOND);
    expect(await clock.run(() => pacer.wait(KEY, SECOND, 'a'))).toBe(1);
    clock.advance(50 * 60 * SECOND);
    pacer.book(KEY, SECOND, 'b');
    expect(pacer.wentBack(KEY, 'a')).toBe(1);
    clock.advance(11 * 60 * SECOND);
    pacer.book(KEY, SECOND, 'b');
    expect(pacer.wentBack(KEY, 'a')).toBe(0);
  });
});

describe('the paced services delivery-retry posts through (answers)', () => {
  it('a delivered answer holds nothing: the next post waits the interval alone', async () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    const services = pacedServices(chatServices({ slack: fakeChatService([{ kind: 'delivered' }], SECOND) }), pacer);
    await services.slack.post(KEY, { title: 'one' }, { timeoutMs: SECOND });
    expect(pacer.delayFor(KEY)).toBe(SECOND);
  });

  it('a Retry-After in a retryable answer holds the webhook that long', async () => {
    const clock = virtualClock();
    const pacer = createPacer(clock.now, clock.sleep);
    const slack = fakeChatService([{ kind: 'retryable', reason: 'rate_limited', retryAfterMs: 30 * SECOND }], SECOND);
    const services = pacedServices(chatServices({ slack }), pacer);
    await services.slack.post(KEY, { title: 'one' }, { timeoutMs: SECOND });
    expect(pacer.delayFor(KEY)).toBe(30 * SECOND);
  });
});
