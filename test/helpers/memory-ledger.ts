import type { MessageRef } from '../../lib/chat/service.js';
import type { Claim, DeliveryLedger, EscalationClaim, EscalationLedger } from '../../lib/dedup/ledger.js';
import { inMemoryLedger } from '../../lib/dedup/memory.js';

/**
 * The in-memory ledger of `npm start` (the DynamoDB adapter's rules), recording each call in
 * `calls`; setting `fail` makes every call throw, as a table outage would.
 */
export function memoryLedger(now: () => number = Date.now, triageOf?: Parameters<typeof inMemoryLedger>[1]) {
  const inner = inMemoryLedger(now, triageOf);
  const ledger = {
    entries: inner.entries,
    anomalies: inner.anomalies,
    calls: [] as string[],
    fail: undefined as Error | undefined,
  };
  /** Records the call, fails when told to, then does what the real in-memory ledger does. */
  const called = <T>(name: string, work: () => Promise<T>): Promise<T> => {
    ledger.calls.push(name);
    return ledger.fail ? Promise.reject(ledger.fail) : work();
  };
  const calls: DeliveryLedger = {
    startAnomaly: (id: string) => called('start anomaly', () => inner.startAnomaly(id)),
    anomalyOpened: (id: string, opening: MessageRef) => called('anomaly opened', () => inner.anomalyOpened(id, opening)),
    anomalyFollowedUp: (id: string) => called('anomaly followed up', () => inner.anomalyFollowedUp(id)),
    forgetAnomaly: (id: string) => called('forget anomaly', () => inner.forgetAnomaly(id)),
    readAnomaly: (id: string) => called('read anomaly', () => inner.readAnomaly(id)),
    claim: (id: string, claim: Claim) => called(`claim ${id.slice(0, 8)}`, () => inner.claim(id, claim)),
    record: (id: string, state: 'delivered' | 'queued') => called(`record ${state}`, () => inner.record(id, state)),
    release: (id: string, token?: string) => called('release', () => inner.release(id, token)),
    escalations: async () => {
      const own = await inner.escalations();
      const wrapped: EscalationLedger = {
        keepAnomaly: (id: string, firstSeen: number, until: number) => called('keep anomaly', () => own.keepAnomaly(id, firstSeen, until)),
        claimEscalation: (id: string, claim: EscalationClaim) => called('claim escalation', () => own.claimEscalation(id, claim)),
        escalated: (id: string, firstSeen: number) => called('escalated', () => own.escalated(id, firstSeen)),
        releaseEscalation: (id: string, token: string) => called('release escalation', () => own.releaseEscalation(id, token)),
        latestEscalation: (id: string, firstSeen: number) => called('latest escalation', () => own.latestEscalation(id, firstSeen)),
        escalationWaiting: (id: string, firstSeen: number, updates: number) =>
          called('escalation waiting', () => own.escalationWaiting(id, firstSeen, updates)),
      };
      return wrapped;
    },
  };
  return Object.assign(ledger, calls);
}
