import { createHash, randomUUID } from 'node:crypto';
import * as z from 'zod/mini';
import type { CostApiClient, PlatformLoop } from '../cost-api/client.js';
import { CostApiError } from '../cost-api/errors.js';
import type { PlatformSession } from '../cost-api/session.js';
import type { Logger } from '../log/logger.js';
import { type OwnerDirectory, payerOf } from '../owners/directory.js';
import { errorReason, ReasonedError } from '../shared/errors.js';

/**
 * "Expected" written back to the platform as a cost event (docs/platform.md): one event per
 * anomaly, whichever of its destinations marked it, deleted again by a reopen. The anomaly is
 * known across destinations by its title and account id as the alert gave them; the event's
 * uuid is kept on a `costevent#<hash>` item of the dedup table, so that no second one is written.
 */

/** What a cost event is written from: the anomaly as its link or button carries it, and who decided. */
export const costEventSubjectSchema = z.strictObject({
  /** The alert's title, one line. */
  title: z.string().check(z.maxLength(300)),
  /** The account as a Triage link labels it (`name (id)`, the id, or the name), or its id alone. */
  account: z.string().check(z.maxLength(200)),
  destination: z.string().check(z.minLength(1), z.maxLength(200)),
  by: z.string().check(z.maxLength(200)),
  note: z.optional(z.string().check(z.maxLength(500))),
  /** `YYYY-MM-DD`: the day the anomaly was first seen (UTC). */
  day: z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/)),
});
export type CostEventSubject = z.infer<typeof costEventSubjectSchema>;

export type CostEventChange = 'write' | 'delete';
export type CostEventOutcome = 'written' | 'deleted' | 'skipped';

/** The cloud account id in an account label (`Production payer (123456789012)`, or the id alone). */
export function accountIdOf(label: string): string | undefined {
  const inParentheses = /\(([^()\s]+)\)\s*$/.exec(label)?.[1];
  if (inParentheses) return inParentheses;
  return /^[\w-]{4,64}$/.test(label.trim()) ? label.trim() : undefined;
}

const digest = (subject: Pick<CostEventSubject, 'title' | 'account'>): string =>
  createHash('sha256')
    .update(`${subject.title.replace(/\s+/g, ' ').trim()}\n${accountIdOf(subject.account) ?? subject.account.trim()}`)
    .digest('hex');

/** The table item of an anomaly's cost event: a link and a button of the same alert name the same one. */
export const costEventItemId = (subject: Pick<CostEventSubject, 'title' | 'account'>): string => `costevent#${digest(subject)}`;

/** The mark in an event's description by which a writer finds an event an earlier one wrote but could not record. */
export const costEventRef = (subject: Pick<CostEventSubject, 'title' | 'account'>): string => `ref ${digest(subject).slice(0, 12)}`;

/** The event as the platform takes it (all four fields are required there). */
export function eventOf(subject: CostEventSubject): { title: string; description: string; date: string; createdBy: string } {
  const by = subject.by.trim();
  const note = subject.note?.trim();
  return {
    title: `Expected: ${subject.title}`.slice(0, 200),
    description: [
      `Marked expected by ${by || 'someone'} at ${subject.destination}.`,
      ...(note ? [`Note: ${/[.!?]$/.test(note) ? note : `${note}.`}`] : []),
      `Cost Alert Relay (${costEventRef(subject)})`,
    ].join(' '),
    date: subject.day,
    createdBy: by || 'Cost Alert Relay',
  };
}

/** Nothing is written: the owner directory knows no payer of the account, or the label names no account. */
export class CostEventSkippedError extends ReasonedError<'no_account' | 'no_owner'> {}
/** Another writer holds the anomaly's event for now: try again later, never beside it. */
export class CostEventBusyError extends ReasonedError<'busy'> {}

/** What one queued cost event may take in delivery-retry: a token, the directory, a claim, the platform's answer and its record. */
export const COST_EVENT_CALL_MS = 10_000;

export interface CostEventWriter {
  /** Writes the anomaly's event unless it has one, or deletes the one it has; `skipped` when there is nothing to do. */
  apply(change: CostEventChange, subject: CostEventSubject, signal: AbortSignal): Promise<CostEventOutcome>;
}

/** A claim on writing an anomaly's event lasts this long: a writer cut off leaves it to the next after it. */
export const CLAIM_SECONDS = 60;

/** Where an anomaly's event is recorded (the dedup table's `costevent#` items; memory under `npm start`). */
export interface CostEventRecords {
  /**
   * Takes the claim on writing the event: `written` when it is already, `busy` while another
   * writer's claim lasts, `claimed` (and whether a writer before was cut off, its claim lapsed).
   */
  claim(
    id: string,
    token: string,
    nowSeconds: number,
    signal: AbortSignal,
  ): Promise<{ kind: 'claimed'; lapsed: boolean } | { kind: 'written' } | { kind: 'busy' }>;
  /** Gives the claim up: the platform answered that it wrote nothing. */
  release(id: string, token: string, signal: AbortSignal): Promise<void>;
  /** Keeps the event's uuid, when the claim is still this writer's. */
  record(id: string, token: string, uuid: string, signal: AbortSignal): Promise<void>;
  read(id: string, signal: AbortSignal): Promise<{ uuid?: string; claimUntil?: number } | undefined>;
  /** Forgets the uuid of a deleted event. */
  forget(id: string, uuid: string, signal: AbortSignal): Promise<void>;
}

export function costEventWriter(deps: {
  records: CostEventRecords;
  owners: OwnerDirectory;
  platform: {
    session: PlatformSession;
    client: Pick<CostApiClient, 'generateToken'> & Pick<PlatformLoop, 'createEvent' | 'deleteEvent' | 'listEvents'>;
  };
  now: () => number;
  logger: Logger;
}): CostEventWriter {
  const { records, platform } = deps;
  const seconds = () => Math.floor(deps.now() / 1000);

  const payerFor = async (subject: CostEventSubject, signal: AbortSignal): Promise<string> => {
    const accountId = accountIdOf(subject.account);
    if (!accountId) throw new CostEventSkippedError('The alert names no account.', 'no_account');
    const payer = payerOf(await deps.owners.read(accountId, signal));
    if (!payer) throw new CostEventSkippedError('The owner directory knows no payer of the account.', 'no_owner');
    return payer;
  };

  /** The event an earlier writer created but was cut off before recording: found by its mark, on its day. */
  async function written(subject: CostEventSubject, payer: string, signal: AbortSignal): Promise<string | undefined> {
    const ref = costEventRef(subject);
    const events = await platform.session.withAuth(
      payer,
      (auth) => platform.client.listEvents(auth, { from: subject.day, to: subject.day }, { signal }),
      { signal },
    );
    return events.find((event) => event.description.includes(ref))?.uuid;
  }

  async function write(subject: CostEventSubject, signal: AbortSignal): Promise<CostEventOutcome> {
    const id = costEventItemId(subject);
    const payer = await payerFor(subject, signal);
    const token = randomUUID();
    // A second "Expected", here or at another destination of the anomaly, finds the event written.
    const claimed = await records.claim(id, token, seconds(), signal);
    if (claimed.kind === 'written') return 'skipped';
    if (claimed.kind === 'busy') throw new CostEventBusyError("Another writer is writing this anomaly's cost event.", 'busy');
    let uuid: string;
    try {
      uuid =
        // A claim that lapsed: its writer may have created the event and not lived to record it.
        (claimed.lapsed ? await written(subject, payer, signal) : undefined) ??
        (await platform.session.withAuth(payer, (auth) => platform.client.createEvent(auth, eventOf(subject), { signal }), { signal }));
    } catch (error) {
      // An answer (a refusal, a 5xx) says nothing was written: the next attempt need not wait for
      // the claim to lapse. Without one (a timeout) the claim stays, and lapses into a search.
      if (error instanceof CostApiError && error.status !== undefined) await records.release(id, token, signal).catch(() => undefined);
      throw error;
    }
    await records.record(id, token, uuid, signal).catch((error: unknown) => {
      // Written, not recorded: the claim lapses, and the next writer finds the event by its mark.
      deps.logger.warn('cost event written but its uuid could not be kept', { reason: errorReason(error) });
    });
    return 'written';
  }

  async function remove(subject: CostEventSubject, signal: AbortSignal): Promise<CostEventOutcome> {
    const id = costEventItemId(subject);
    const record = await records.read(id, signal);
    const uuid = record?.uuid;
    if (!uuid) {
      // A write still under way would leave its event behind this reopen: wait for it to finish.
      if ((record?.claimUntil ?? 0) >= seconds()) throw new CostEventBusyError("The anomaly's cost event is being written.", 'busy');
      return 'skipped';
    }
    const payer = await payerFor(subject, signal);
    await platform.session.withAuth(payer, (auth) => platform.client.deleteEvent(auth, uuid, { signal }), { signal });
    await records.forget(id, uuid, signal);
    return 'deleted';
  }

  return {
    async apply(change, subject, signal) {
      try {
        return await (change === 'write' ? write(subject, signal) : remove(subject, signal));
      } catch (error) {
        if (error instanceof CostEventSkippedError) {
          deps.logger.info('no cost event', { reason: error.reason });
          return 'skipped';
        }
        throw error;
      }
    },
  };
}

/** In memory, as `npm start` and the tests keep them. */
export function memoryCostEventRecords(): CostEventRecords & {
  items: Map<string, { uuid?: string; token?: string; claimUntil?: number }>;
} {
  const items = new Map<string, { uuid?: string; token?: string; claimUntil?: number }>();
  return {
    items,
    async claim(id, token, nowSeconds) {
      const item = items.get(id);
      if (item?.uuid) return { kind: 'written' };
      if (item?.claimUntil !== undefined && item.claimUntil >= nowSeconds) return { kind: 'busy' };
      items.set(id, { token, claimUntil: nowSeconds + CLAIM_SECONDS });
      return { kind: 'claimed', lapsed: item?.token !== undefined };
    },
    async release(id, token) {
      if (items.get(id)?.token === token) items.delete(id);
    },
    async record(id, token, uuid) {
      if (items.get(id)?.token !== token) throw new Error("the claim is no longer this writer's");
      items.set(id, { uuid });
    },
    async read(id) {
      const item = items.get(id);
      return (
        item && { ...(item.uuid ? { uuid: item.uuid } : {}), ...(item.claimUntil !== undefined ? { claimUntil: item.claimUntil } : {}) }
      );
    },
    async forget(id, uuid) {
      if (items.get(id)?.uuid === uuid) items.delete(id);
    },
  };
}

/** A cost event that could not be written (or deleted) in time, waiting on the retry queue. */
export const costEventJobSchema = z.strictObject({
  version: z.literal(2),
  kind: z.literal('cost_event'),
  change: z.enum(['write', 'delete']),
  subject: costEventSubjectSchema,
});
export type CostEventJob = z.infer<typeof costEventJobSchema>;

export function parseCostEventJob(body: string): CostEventJob | undefined {
  try {
    const parsed = costEventJobSchema.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
