import type { MessageRef } from '../../lib/chat/service.js';
import type { Claim, DeliveryLedger, EscalationClaim, EscalationLedger, Parking, QueuedJob } from '../../lib/dedup/ledger.js';
import { inMemoryLedger } from '../../lib/dedup/memory.js';

/**
 * The in-memory ledger of `npm start` (the DynamoDB adapter's rules), recording each call in
 * `calls`; setting `fail` makes every call throw, as a table outage would, and a name in
 * `failing` makes that call alone throw. With `windowSeconds` its anomaly items expire as the
 * table's do: each post keeps one for the window (or until `keepAnomaly` said, if later), and
 * the first delivery after that opens the anomaly afresh.
 */
export function memoryLedger(now: () => number = Date.now, triageOf?: Parameters<typeof inMemoryLedger>[1], windowSeconds?: number) {
  const inner = inMemoryLedger(now, triageOf);
  const ledger = {
    entries: inner.entries,
    anomalies: inner.anomalies,
    calls: [] as string[],
    fail: undefined as Error | undefined,
    failing: new Set<string>(),
  };
  /** Records the call, fails when told to, then does what the real in-memory ledger does. */
  const called = <T>(name: string, work: () => Promise<T>): Promise<T> => {
    ledger.calls.push(name);
    if (ledger.fail) return Promise.reject(ledger.fail);
    if (ledger.failing.has(name)) return Promise.reject(Object.assign(new Error(`${name} failed`), { name: 'InternalServerError' }));
    return work();
  };

  // The table's expiry, where a window is given: until when each anomaly item lives, and what keepAnomaly asked for.
  const expires = new Map<string, number>();
  const kept = new Map<string, number>();
  const seconds = () => Math.floor(now() / 1000);
  const posted = (id: string) => {
    if (windowSeconds !== undefined) expires.set(id, Math.max(seconds() + windowSeconds, kept.get(id) ?? 0));
  };
  const startAnomaly = async (id: string) => {
    if ((expires.get(id) ?? Number.POSITIVE_INFINITY) < seconds()) {
      inner.anomalies.delete(id);
      expires.delete(id);
      kept.delete(id);
    }
    const start = await inner.startAnomaly(id);
    if (start.kind === 'opened') posted(id);
    return start;
  };

  const calls: DeliveryLedger = {
    startAnomaly: (id: string) => called('start anomaly', () => startAnomaly(id)),
    anomalyOpened: (id: string, opening: MessageRef) =>
      called('anomaly opened', async () => {
        await inner.anomalyOpened(id, opening);
        posted(id);
      }),
    anomalyFollowedUp: (id: string) =>
      called('anomaly followed up', async () => {
        await inner.anomalyFollowedUp(id);
        posted(id);
      }),
    forgetAnomaly: (id: string) => called('forget anomaly', () => inner.forgetAnomaly(id)),
    readAnomaly: (id: string) => called('read anomaly', () => inner.readAnomaly(id)),
    claim: (id: string, claim: Claim) => called(`claim ${id.slice(0, 8)}`, () => inner.claim(id, claim)),
    claimQueued: (id: string, claim: Claim & { job: QueuedJob }) => called('claim queued', () => inner.claimQueued(id, claim)),
    record: (id: string, state: 'delivered' | 'queued') => called(`record ${state}`, () => inner.record(id, state)),
    park: (id: string, parking: Parking) => called('park', () => inner.park(id, parking)),
    release: (id: string, token?: string) => called('release', () => inner.release(id, token)),
    escalations: async () => {
      const own = await inner.escalations();
      const opening = (id: string, firstSeen: number) => inner.anomalies.get(id)?.firstSeen === firstSeen;
      const wrapped: EscalationLedger = {
        keepAnomaly: (id: string, firstSeen: number, until: number) =>
          called('keep anomaly', async () => {
            await own.keepAnomaly(id, firstSeen, until);
            if (windowSeconds === undefined || !opening(id, firstSeen) || (expires.get(id) ?? 0) >= until) return;
            expires.set(id, until);
            kept.set(id, until);
          }),
        claimEscalation: (id: string, claim: EscalationClaim) => called('claim escalation', () => own.claimEscalation(id, claim)),
        escalated: (id: string, firstSeen: number) => called('escalated', () => own.escalated(id, firstSeen)),
        openingShown: (id: string, firstSeen: number) => called('opening shown', () => own.openingShown(id, firstSeen)),
        releaseEscalation: (id: string, token: string) => called('release escalation', () => own.releaseEscalation(id, token)),
        waitingEscalation: (id: string, firstSeen: number) =>
          called('waiting escalation', async () => {
            const waiting = await own.waitingEscalation(id, firstSeen);
            const expiresAt = opening(id, firstSeen) ? expires.get(id) : undefined;
            return expiresAt === undefined ? waiting : { ...waiting, expiresAt };
          }),
        escalationWaiting: (id: string, firstSeen: number, updates: number) =>
          called('escalation waiting', () => own.escalationWaiting(id, firstSeen, updates)),
        escalationUnscheduled: (id: string, firstSeen: number) =>
          called('escalation unscheduled', () => own.escalationUnscheduled(id, firstSeen)),
        escalationScheduled: (id: string, firstSeen: number) =>
          called('escalation scheduled', () => own.escalationScheduled(id, firstSeen)),
      };
      return wrapped;
    },
  };
  return Object.assign(ledger, calls);
}
