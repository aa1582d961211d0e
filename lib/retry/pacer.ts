import type { ChatService } from '../chat/service.js';
import type { ChatServices } from '../notify/kinds.js';
import { sleep as realSleep, type Sleep } from '../shared/sleep.js';

/**
 * Keeps posts to one webhook at least the service's interval apart within this container, as
 * each chat service documents its rate (Slack about one message per second per webhook), and
 * none while a Retry-After holds it. A record that goes back to the queue until its slot comes
 * books that slot under its message id, so that it finds the slot its own when it comes back
 * rather than behind every record that arrived meanwhile.
 */
export interface Pacer {
  /** Time until a post to `key` may go: `id`'s booked slot when it has one, else the next free one. */
  delayFor(key: string, id?: string): number;
  /**
   * Resolves when that time has come, and takes the slot; the next one is `intervalMs` later.
   * Resolves to how many times `id` went back to the queue for a slot in this container, since
   * its message was first received: those receives of its message were no attempts.
   */
  wait(key: string, intervalMs: number, id?: string): Promise<number>;
  /** Books the next free slot for `id`, which goes back to the queue until then; the time until it. */
  book(key: string, intervalMs: number, id: string): number;
  /** How many times `id` went back to the queue for a slot in this container (those receives were no attempts). */
  wentBack(key: string, id: string): number;
  /** A post to `key` goes out now, whoever waited for it: the next one waits `intervalMs` after it. */
  posted(key: string, intervalMs: number): void;
  /** No post to `key` for `ms`, as a Retry-After demands; slots booked within it move after it. */
  holdFor(key: string, ms: number): void;
}

/**
 * How long a booked slot is kept for the record that booked it. Past it the record went to
 * another container, or was done there: its slot is nobody's.
 */
const BOOKING_KEPT_MS = 5 * 60_000;

/**
 * How long the count of a record's waits is kept after it last waited or took its slot: longer
 * than any delay until its message comes back (SQS's longest, or the queue's visibility timeout),
 * so that a record's waits between all its attempts are counted, not those since the last one.
 */
const WAITS_KEPT_MS = 60 * 60_000;

interface KeyPace {
  /** The next slot nobody has taken or booked. */
  next: number;
  /** The last slot taken, or the last post sent, whichever is later. */
  last: number;
  intervalMs: number;
  /** Until when a Retry-After holds the key. */
  heldUntil: number;
  /**
   * By message id: the slot a record waiting on the queue booked (none once it took it), how
   * often it went back for a slot, and when it last booked or took one.
   */
  booked: Map<string, { at?: number; times: number; touched: number }>;
}

export function createPacer(now: () => number = Date.now, sleep: Sleep = realSleep): Pacer {
  const keys = new Map<string, KeyPace>();
  const paceOf = (key: string, intervalMs: number) => {
    let pace = keys.get(key);
    if (!pace) {
      pace = { next: 0, last: Number.NEGATIVE_INFINITY, intervalMs, heldUntil: 0, booked: new Map() };
      keys.set(key, pace);
    }
    pace.intervalMs = intervalMs;
    return pace;
  };
  /** The earliest a post may go: after the hold, and an interval after the last one. */
  const earliest = (pace: KeyPace) => Math.max(pace.heldUntil, pace.last + pace.intervalMs);
  const slotOf = (pace: KeyPace, id: string | undefined) => {
    const booked = id === undefined ? undefined : pace.booked.get(id);
    return Math.max(booked?.at ?? pace.next, earliest(pace));
  };
  const forgetOldBookings = (pace: KeyPace) => {
    const before = now() - BOOKING_KEPT_MS;
    for (const [id, booking] of pace.booked) {
      if (booking.touched < now() - WAITS_KEPT_MS) pace.booked.delete(id);
      else if (booking.at !== undefined && booking.at < before) pace.booked.set(id, { times: booking.times, touched: booking.touched });
    }
  };

  return {
    delayFor(key, id) {
      const pace = keys.get(key);
      return pace ? Math.max(0, slotOf(pace, id) - now()) : 0;
    },
    async wait(key, intervalMs, id) {
      const pace = paceOf(key, intervalMs);
      const slot = Math.max(now(), slotOf(pace, id));
      const booking = id === undefined ? undefined : pace.booked.get(id);
      const wentBack = booking?.times ?? 0;
      // The slot is taken; the count stays, for the receives of its next attempts.
      if (id !== undefined && booking) pace.booked.set(id, { times: booking.times, touched: now() });
      pace.last = slot;
      pace.next = Math.max(pace.next, slot + intervalMs);
      const delay = slot - now();
      if (delay > 0) await sleep(delay);
      return wentBack;
    },
    book(key, intervalMs, id) {
      const pace = paceOf(key, intervalMs);
      forgetOldBookings(pace);
      const booked = pace.booked.get(id);
      const times = (booked?.times ?? 0) + 1;
      // A slot it booked before stays its own, unless a hold or a later post has passed it.
      if (booked?.at !== undefined && booked.at >= earliest(pace)) {
        pace.booked.set(id, { at: booked.at, times, touched: now() });
        return Math.max(0, booked.at - now());
      }
      const slot = Math.max(now(), pace.next, earliest(pace));
      pace.booked.set(id, { at: slot, times, touched: now() });
      pace.next = slot + intervalMs;
      return slot - now();
    },
    wentBack: (key, id) => keys.get(key)?.booked.get(id)?.times ?? 0,
    posted(key, intervalMs) {
      const pace = paceOf(key, intervalMs);
      pace.last = Math.max(pace.last, now());
      pace.next = Math.max(pace.next, pace.last + intervalMs);
    },
    holdFor(key, ms) {
      const pace = keys.get(key) ?? paceOf(key, 0);
      pace.heldUntil = Math.max(pace.heldUntil, now() + ms);
      pace.next = Math.max(pace.next, pace.heldUntil);
    },
  };
}

/**
 * The chat services as delivery-retry posts through them: every post, whatever job it belongs
 * to (a delivery, each part of a digest, an escalation), tells the pacer it went out, and a
 * Retry-After in its answer holds its key. Their `minIntervalMs` is the interval kept: the
 * service's own, unless the stack sets one (`DELIVERY_MIN_INTERVAL_MS`).
 */
export function pacedServices(services: ChatServices, pacer: Pacer, minIntervalMs?: number): ChatServices {
  const paced = (service: ChatService): ChatService => {
    const intervalMs = minIntervalMs ?? service.minIntervalMs;
    return {
      format: (...args) => service.format(...args),
      paceKey: (address) => service.paceKey(address),
      minIntervalMs: intervalMs,
      async post(address, payload, options) {
        const key = service.paceKey(address);
        pacer.posted(key, intervalMs);
        const outcome = await service.post(address, payload, options);
        if (outcome.kind === 'retryable' && outcome.retryAfterMs !== undefined) pacer.holdFor(key, outcome.retryAfterMs);
        return outcome;
      },
    };
  };
  return Object.fromEntries(Object.entries(services).map(([name, service]) => [name, paced(service)])) as unknown as ChatServices;
}
