import type { MessageRef } from '../../lib/chat/service.js';
import type { AnomalyStart, AnomalyState, Claim, ClaimOutcome, DeliveryLedger } from '../../lib/dedup/ledger.js';

type Entry = { state: 'claimed' | 'delivered' | 'queued'; claimUntil?: number; token?: string };

/** The dedup ledger in memory, with the DynamoDB adapter's rules; `fail` makes every call throw. */
export function memoryLedger(
  now: () => number = Date.now,
): DeliveryLedger & { entries: Map<string, Entry>; anomalies: Map<string, AnomalyState>; fail?: Error; calls: string[] } {
  const entries = new Map<string, Entry>();
  const anomalies = new Map<string, AnomalyState>();
  const ledger = {
    entries,
    anomalies,
    async startAnomaly(id: string): Promise<AnomalyStart> {
      ledger.calls.push('start anomaly');
      if (ledger.fail) throw ledger.fail;
      const state = anomalies.get(id);
      if (state) return { kind: 'existing', state: { ...state } };
      anomalies.set(id, { firstSeen: Math.floor(now() / 1000), followUps: 0 });
      return { kind: 'opened' };
    },
    async anomalyOpened(id: string, opening: MessageRef) {
      ledger.calls.push('anomaly opened');
      if (ledger.fail) throw ledger.fail;
      const state = anomalies.get(id) ?? { firstSeen: Math.floor(now() / 1000), followUps: 0 };
      anomalies.set(id, { ...state, opening });
    },
    async anomalyFollowedUp(id: string) {
      ledger.calls.push('anomaly followed up');
      if (ledger.fail) throw ledger.fail;
      const state = anomalies.get(id) ?? { firstSeen: Math.floor(now() / 1000), followUps: 0 };
      anomalies.set(id, { ...state, followUps: state.followUps + 1 });
    },
    async forgetAnomaly(id: string) {
      ledger.calls.push('forget anomaly');
      if (ledger.fail) throw ledger.fail;
      const state = anomalies.get(id);
      if (state && !state.opening && state.followUps === 0) anomalies.delete(id);
    },
    calls: [] as string[],
    fail: undefined as Error | undefined,
    async claim(id: string, claim: Claim): Promise<ClaimOutcome> {
      ledger.calls.push(`claim ${id.slice(0, 8)}`);
      if (ledger.fail) throw ledger.fail;
      const entry = entries.get(id);
      if (entry?.state === 'delivered' || entry?.state === 'queued') return { kind: 'done', state: entry.state };
      if (entry?.state === 'claimed' && entry.token !== claim.token && (entry.claimUntil ?? 0) > now()) {
        return { kind: 'in_progress', retryAfterSeconds: Math.max(1, Math.ceil(((entry.claimUntil ?? 0) - now()) / 1000)) };
      }
      entries.set(id, { state: 'claimed', claimUntil: now() + claim.holdSeconds * 1000, token: claim.token });
      return { kind: 'claimed' };
    },
    async record(id: string, state: 'delivered' | 'queued') {
      ledger.calls.push(`record ${state}`);
      if (ledger.fail) throw ledger.fail;
      entries.set(id, { state });
    },
    async release(id: string, token?: string) {
      ledger.calls.push('release');
      if (ledger.fail) throw ledger.fail;
      const entry = entries.get(id);
      if (token ? entry?.token === token : entry?.state !== 'delivered') entries.delete(id);
    },
  };
  return ledger;
}
