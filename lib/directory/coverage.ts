import type { CoveringCostCenter, PayerAccount } from '../cost-api/schema.js';
import { fittingCostCenters } from '../message/cost-center.js';
import { AWS_ACCOUNT_ID_DIGITS } from '../owners/account-id.js';
import type { CostCenterRef, OwnerRecord, PartCostCenter, PayerPart } from '../owners/directory.js';
import type { PayerIndex } from './payer-index.js';

/** One payer's cost centers as one list read them. */
export interface PayerCoverage {
  payer: PayerAccount;
  /** Epoch seconds when the list answered. */
  readAt: number;
  costCenters: CoveringCostCenter[];
}

/** The platform's cloud type of AWS accounts (reference/cost-api.md, `cloudTypeId`). */
const AWS_CLOUD_TYPE = 0;

/**
 * What the cost centers of one record may take of DynamoDB's 400 KB an item, with room left for
 * what a message names and the rest of the item. Only an account covered by thousands of cost
 * centers comes near it.
 */
const RECORD_COST_CENTER_BYTES = 300_000;
/** An entry's attribute names and type markers, beside its id and name. */
const ENTRY_OVERHEAD_BYTES = 40;

/**
 * The cloud account id as deliveries carry it. An AWS account id always has twelve digits, so a
 * shorter run of digits under an AWS payer is one that lost its leading zeros as a JSON number.
 */
export function cloudAccountIdOf(linkedAccount: string, payer: PayerAccount): { id: string; padded: boolean } {
  const padded = payer.cloudTypeId === AWS_CLOUD_TYPE && linkedAccount.length < AWS_ACCOUNT_ID_DIGITS && /^\d+$/.test(linkedAccount);
  return { id: padded ? linkedAccount.padStart(AWS_ACCOUNT_ID_DIGITS, '0') : linkedAccount, padded };
}

/** Whether any record of the list names a linked account (else the v1 list is read instead). */
export const namesLinkedAccounts = (costCenters: readonly CoveringCostCenter[]): boolean =>
  costCenters.some((c) => c.linkedAccounts.length > 0);

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const byIdAndName = (a: CostCenterRef, b: CostCenterRef) => byText(a.id, b.id) || byText(a.name, b.name);

/** Two payers may number their cost centers alike: only the same id and name is the same one. */
const costCenterKey = ({ id, name }: CostCenterRef) => `${id}\u0000${name}`;

const entryBytes = ({ id, name }: CostCenterRef) => Buffer.byteLength(id) + Buffer.byteLength(name) + ENTRY_OVERHEAD_BYTES;

/**
 * An account's record from its payers' parts: every cost center of every part (marked where its
 * id is shared), as many as an item holds; what a message names (every part's, each once, as
 * many as a message carries); and the earliest time those parts were read, so that the record
 * expires no later than its oldest part should. `leftOut` counts the cost centers an item could
 * not hold.
 */
export function recordOfParts(
  accountId: string,
  parts: readonly PayerPart[],
  shared: ReadonlySet<string>,
): { record: OwnerRecord; leftOut: number } {
  let room = RECORD_COST_CENTER_BYTES;
  let leftOut = 0;
  const kept = [...parts]
    .sort((a, b) => byText(a.accountKey, b.accountKey))
    .map((part) => ({
      accountKey: part.accountKey,
      readAt: part.readAt,
      costCenters: [...part.costCenters].sort(byIdAndName).flatMap(({ id, name }): PartCostCenter[] => {
        room -= entryBytes({ id, name });
        if (room < 0) {
          leftOut++;
          return [];
        }
        return [{ id, name, ...(shared.has(id) ? { idShared: true } : {}) }];
      }),
    }));
  const named = new Map<string, CostCenterRef>();
  for (const part of kept) for (const { id, name } of part.costCenters) named.set(costCenterKey({ id, name }), { id, name });
  return {
    record: {
      accountId,
      costCenters: fittingCostCenters([...named.values()].sort(byIdAndName)),
      readAt: Math.min(...parts.map((p) => p.readAt)),
      parts: kept,
    },
    leftOut,
  };
}

/** Each payer's part of every account its lists name: its cost centers that cover the account, each once. */
function partsByAccount(payers: readonly PayerCoverage[]): { accounts: Map<string, Map<string, PayerPart>>; paddedIds: number } {
  const accounts = new Map<string, Map<string, PayerPart>>();
  let paddedIds = 0;
  for (const { payer, readAt, costCenters } of payers) {
    for (const costCenter of costCenters) {
      const ref: CostCenterRef = { id: costCenter.id, name: costCenter.name };
      for (const linked of costCenter.linkedAccounts) {
        const { id, padded } = cloudAccountIdOf(linked, payer);
        if (padded) paddedIds++;
        const parts = accounts.get(id) ?? new Map<string, PayerPart>();
        const part = parts.get(payer.accountKey) ?? { accountKey: payer.accountKey, costCenters: [], readAt };
        if (!part.costCenters.some((c) => costCenterKey(c) === costCenterKey(ref))) part.costCenters.push(ref);
        parts.set(payer.accountKey, part);
        accounts.set(id, parts);
      }
    }
  }
  return { accounts, paddedIds };
}

/**
 * One record per cloud account that the lists read name, made of each payer's part; how many ids
 * got their leading zeros back; and how many cost centers a record could not hold.
 */
export function ownerRecords(
  payers: readonly PayerCoverage[],
  shared: ReadonlySet<string>,
): { records: OwnerRecord[]; paddedIds: number; leftOut: number } {
  const { accounts, paddedIds } = partsByAccount(payers);
  let leftOut = 0;
  const records = [...accounts.entries()]
    .sort(([a], [b]) => byText(a, b))
    .map(([accountId, parts]) => {
      const made = recordOfParts(accountId, [...parts.values()], shared);
      leftOut += made.leftOut;
      return made.record;
    });
  return { records, paddedIds, leftOut };
}

/** What one payer's lists cover, as its index keeps it: the accounts, and each cost center that covers one. */
export function payerIndexOf(coverage: PayerCoverage): PayerIndex {
  const { accounts } = partsByAccount([coverage]);
  const named = new Map<string, CostCenterRef>();
  for (const costCenter of coverage.costCenters) {
    if (costCenter.linkedAccounts.length > 0) named.set(costCenterKey(costCenter), { id: costCenter.id, name: costCenter.name });
  }
  return { accounts: [...accounts.keys()].sort(byText), costCenters: [...named.values()].sort(byIdAndName), readAt: coverage.readAt };
}

/**
 * What to write for an account when some listed payers were not read in this run: the fresh
 * record plus the stored parts of those payers, which this run could not confirm or deny. The
 * parts of payers it read are replaced; those of payers no longer listed go. A stored record
 * without parts (written before they were kept) may hold an unread payer's cost centers, so it
 * is left as it was unless this run names every one of them again: undefined then.
 */
export function mergedRecord(
  fresh: OwnerRecord,
  stored: OwnerRecord | undefined,
  unread: ReadonlySet<string>,
  shared: ReadonlySet<string>,
): OwnerRecord | undefined {
  if (!stored) return fresh;
  if (!stored.parts) {
    const named = new Set((fresh.parts ?? []).flatMap((part) => part.costCenters.map(costCenterKey)));
    return stored.costCenters.every((c) => named.has(costCenterKey(c))) ? fresh : undefined;
  }
  const kept = stored.parts.filter((part) => unread.has(part.accountKey));
  return kept.length > 0 ? recordOfParts(fresh.accountId, [...(fresh.parts ?? []), ...kept], shared).record : fresh;
}

/**
 * An account that no payer read in this run covers any more, though one of them did before: its
 * stored record less every part but those of payers this run could not read. `remove` when no
 * part is left; `keep` when there is nothing to change (no record, one without parts, or one
 * without such a part).
 */
export function withoutReadPayers(
  stored: OwnerRecord | undefined,
  unread: ReadonlySet<string>,
  shared: ReadonlySet<string>,
): { change: 'keep' } | { change: 'remove' } | { change: 'write'; record: OwnerRecord } {
  if (!stored?.parts) return { change: 'keep' };
  const kept = stored.parts.filter((part) => unread.has(part.accountKey));
  if (kept.length === stored.parts.length) return { change: 'keep' };
  if (kept.length === 0) return { change: 'remove' };
  return { change: 'write', record: recordOfParts(stored.accountId, kept, shared).record };
}
