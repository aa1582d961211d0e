import { CLAIM_SECONDS, type ClaimOutcome, type DeliveryLedger } from '../../lib/dedup/ledger.js';

type Entry = { state: 'claimed' | 'delivered' | 'queued'; claimUntil?: number };

/** The dedup ledger in memory, with the DynamoDB adapter's rules; `fail` makes every call throw. */
export function memoryLedger(now: () => number = Date.now): DeliveryLedger & { entries: Map<string, Entry>; fail?: Error; calls: string[] } {
  const entries = new Map<string, Entry>();
  const ledger = {
    entries,
    calls: [] as string[],
    fail: undefined as Error | undefined,
    async claim(id: string): Promise<ClaimOutcome> {
      ledger.calls.push(`claim ${id.slice(0, 8)}`);
      if (ledger.fail) throw ledger.fail;
      const entry = entries.get(id);
      if (entry?.state === 'delivered' || entry?.state === 'queued') return { kind: 'done', state: entry.state };
      if (entry?.state === 'claimed' && (entry.claimUntil ?? 0) > now()) return { kind: 'in_progress' };
      entries.set(id, { state: 'claimed', claimUntil: now() + CLAIM_SECONDS * 1000 });
      return { kind: 'claimed' };
    },
    async record(id: string, state: 'delivered' | 'queued') {
      ledger.calls.push(`record ${state}`);
      if (ledger.fail) throw ledger.fail;
      entries.set(id, { state });
    },
    async release(id: string) {
      ledger.calls.push('release');
      if (ledger.fail) throw ledger.fail;
      if (entries.get(id)?.state !== 'delivered') entries.delete(id);
    },
  };
  return ledger;
}
