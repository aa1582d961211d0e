import type { AnomalyPost } from '../chat/service.js';
import type { CostCenterRef } from '../message/cost-center.js';
import type { WebhookMessage } from '../message/schema.js';

/** One alert in a group: when it joined, the validated message, and its place in its anomaly. */
export interface GroupEntry {
  /** Its delivery record id (lib/dedup/fingerprint.ts), so that a re-send joins once. */
  key: string;
  at: number;
  message: WebhookMessage;
  anomaly?: AnomalyPost;
  /** The origin it arrived on (lib/delivery/job.ts originSchema), where its triage link leads when it is posted alone. */
  origin?: string;
  /** The cost centers of its account, where the owner directory knew them: named in its digest line, or when it is posted alone. */
  costCenters?: CostCenterRef[];
  /** An opening's first-seen time (epoch seconds) as the table wrote it: what its escalation waits on. */
  firstSeen?: number;
}

export type JoinOutcome =
  | { kind: 'joined' }
  /** No group is open: the alert may open one. */
  | { kind: 'none' }
  /** The same alert is already in the open group. */
  | { kind: 'duplicate' }
  /** The group is closing, or full (by count or by bytes): this alert is delivered on its own. */
  | { kind: 'busy' };

/**
 * One closer's hold on a group: its own token, and how long it may hold the group at most
 * (lib/dedup/ledger.ts claimHoldSeconds), so that a closer that died is taken over once its
 * invocation must have ended.
 */
export interface GroupLease {
  token: string;
  holdSeconds: number;
}

/** A group as its closer takes it: no alert can join it any more. */
export interface TakenGroup {
  kind: 'taken';
  /** In the order they joined (ties by key), the same at every take, so that digests split the same way. */
  entries: GroupEntry[];
  /** Digest messages already posted, so that a closing tried again resumes after them. */
  postedParts: number;
}

export type TakeOutcome =
  | TakenGroup
  /** Flushed, or another group of the destination's: nothing is left to post. */
  | { kind: 'gone' }
  /** Another closer holds it: it posts, and this one tries again once that lease has ended. */
  | { kind: 'leased'; retryAfterSeconds: number };

/**
 * The open group of each grouped destination. `groupId` tells one group from the next at the
 * same destination, so a closing job that arrives twice, or late, closes nothing else; the
 * lease lets one closer post at a time, and the writes of a closer that lost it change nothing.
 */
export interface GroupStore {
  /** Joins the destination's open group, when there is one. */
  join(destination: string, entry: GroupEntry, signal?: AbortSignal): Promise<JoinOutcome>;
  /** Opens group `groupId` with this alert; false when another one opened first. */
  open(destination: string, groupId: string, entry: GroupEntry, waitSeconds: number, signal?: AbortSignal): Promise<boolean>;
  /** Closes group `groupId` to joiners and leases it to this closer, unless another closer's lease still holds. */
  take(destination: string, groupId: string, lease: GroupLease, signal?: AbortSignal): Promise<TakeOutcome>;
  /** `parts` digest messages of the group are posted; false when the lease `token` no longer holds it. */
  posted(destination: string, groupId: string, token: string, parts: number, signal?: AbortSignal): Promise<boolean>;
  /** Every alert is posted or parked: their text is forgotten, and the destination may open a new group. False as for `posted`. */
  flushed(destination: string, groupId: string, token: string, signal?: AbortSignal): Promise<boolean>;
  /** The closer stops before the end and the retry queue brings the closing back: the next closer need not wait for the lease. */
  release(destination: string, groupId: string, token: string, signal?: AbortSignal): Promise<void>;
}

/** Entries in the order they joined; a tie, which a map's order cannot settle, by key. */
export const joinOrder = (a: GroupEntry, b: GroupEntry): number => a.at - b.at || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** The most alerts one group holds; later ones are delivered on their own, so that one digest stays readable. */
export const MAX_GROUP_ALERTS = 200;

/**
 * The most bytes of encoded alerts (entryBytes) one group holds; an alert that would pass it is
 * delivered on its own. DynamoDB refuses an item over 400 KB, and then the join or the
 * closing's write fails: a power of two well under that leaves the rest of the item (the
 * state, the lease, the map's own overhead) far from the limit, while an alert of the largest
 * body the relay accepts (MAX_BODY_BYTES) still fits several times over.
 */
export const MAX_GROUP_BYTES = 256 * 1024;

/** An entry as the group's item stores it. */
export const encodeEntry = (entry: GroupEntry): string => JSON.stringify(entry);

/** What an alert takes in its group's item: its key in the `alerts` map, and its encoded entry. */
export const entryBytes = (entry: GroupEntry): number => Buffer.byteLength(entry.key) + Buffer.byteLength(encodeEntry(entry));

type MemoryGroup = {
  groupId: string;
  state: 'open' | 'closing' | 'flushed';
  entries: GroupEntry[];
  bytes: number;
  postedParts: number;
  /** Epoch seconds, as the table keeps it. */
  lease?: { token: string; until: number };
};

/** The store in this process's memory, with the table's rules: for `npm start` and tests. */
export function inMemoryGroupStore(now: () => number = Date.now): GroupStore & { groups: Map<string, MemoryGroup> } {
  const groups = new Map<string, MemoryGroup>();
  const seconds = () => Math.floor(now() / 1000);
  const current = (destination: string, groupId: string) => {
    const group = groups.get(destination);
    return group?.groupId === groupId ? group : undefined;
  };
  const leased = (destination: string, groupId: string, token: string) => {
    const group = current(destination, groupId);
    return group?.lease?.token === token ? group : undefined;
  };
  return {
    groups,
    async join(destination, entry) {
      const group = groups.get(destination);
      if (!group || group.state === 'flushed') return { kind: 'none' };
      if (group.state !== 'open') return { kind: 'busy' };
      if (group.entries.some((e) => e.key === entry.key)) return { kind: 'duplicate' };
      const bytes = entryBytes(entry);
      if (group.entries.length >= MAX_GROUP_ALERTS || group.bytes + bytes > MAX_GROUP_BYTES) return { kind: 'busy' };
      group.entries.push(entry);
      group.bytes += bytes;
      return { kind: 'joined' };
    },
    async open(destination, groupId, entry) {
      const group = groups.get(destination);
      if (group && group.state !== 'flushed') return false;
      groups.set(destination, { groupId, state: 'open', entries: [entry], bytes: entryBytes(entry), postedParts: 0 });
      return true;
    },
    async take(destination, groupId, lease): Promise<TakeOutcome> {
      const group = current(destination, groupId);
      if (!group || group.state === 'flushed') return { kind: 'gone' };
      const held = group.lease;
      if (held && held.token !== lease.token && held.until > seconds())
        return { kind: 'leased', retryAfterSeconds: held.until - seconds() };
      Object.assign(group, { state: 'closing', lease: { token: lease.token, until: seconds() + lease.holdSeconds } });
      return { kind: 'taken', entries: [...group.entries].sort(joinOrder), postedParts: group.postedParts };
    },
    async posted(destination, groupId, token, parts) {
      const group = leased(destination, groupId, token);
      if (group) group.postedParts = parts;
      return group !== undefined;
    },
    async flushed(destination, groupId, token) {
      const group = leased(destination, groupId, token);
      if (group) Object.assign(group, { state: 'flushed', entries: [], bytes: 0 });
      return group !== undefined;
    },
    async release(destination, groupId, token) {
      const group = leased(destination, groupId, token);
      if (group) delete group.lease;
    },
  };
}
