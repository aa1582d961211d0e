import type { CoveringCostCenter, PayerAccount } from '../cost-api/schema.js';
import { COST_CENTER_LIMITS, fittingCostCenters } from '../message/cost-center.js';
import type { CostCenterRef, OwnerRecord, PayerPart } from '../owners/directory.js';

/** One payer's cost centers as one list read them. */
export interface PayerCoverage {
  payer: PayerAccount;
  /** Epoch seconds when the list answered. */
  readAt: number;
  costCenters: CoveringCostCenter[];
}

/** The platform's cloud type of AWS accounts (reference/cost-api.md, `cloudTypeId`). */
const AWS_CLOUD_TYPE = 0;
const AWS_ACCOUNT_ID_DIGITS = 12;

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

/**
 * An account's record from its payers' parts: every cost center that covers it, each once (as
 * many as a message carries), and the earliest time those parts were read, so that the record
 * expires no later than its oldest part should.
 */
export function recordOfParts(accountId: string, parts: readonly PayerPart[]): OwnerRecord {
  const costCenters = new Map<string, CostCenterRef>();
  for (const part of parts) for (const ref of part.costCenters) costCenters.set(costCenterKey(ref), ref);
  const sorted = [...parts].sort((a, b) => byText(a.payer, b.payer));
  return {
    accountId,
    costCenters: fittingCostCenters([...costCenters.values()].sort(byIdAndName)),
    readAt: Math.min(...parts.map((p) => p.readAt)),
    parts: sorted,
  };
}

/**
 * One record per cloud account that the lists read name, made of each payer's part; and how many
 * of the cost centers named were left out because a record cannot hold them.
 */
export function ownerRecords(payers: readonly PayerCoverage[]): { records: OwnerRecord[]; paddedIds: number; leftOut: number } {
  const accounts = new Map<string, Map<string, PayerPart>>();
  let paddedIds = 0;
  for (const { payer, readAt, costCenters } of payers) {
    for (const costCenter of costCenters) {
      const ref: CostCenterRef = { id: costCenter.id, name: costCenter.name.slice(0, COST_CENTER_LIMITS.nameLength) };
      for (const linked of costCenter.linkedAccounts) {
        const { id, padded } = cloudAccountIdOf(linked, payer);
        if (padded) paddedIds++;
        const parts = accounts.get(id) ?? new Map<string, PayerPart>();
        const part = parts.get(payer.accountKey) ?? { payer: payer.accountKey, costCenters: [], readAt };
        if (!part.costCenters.some((c) => costCenterKey(c) === costCenterKey(ref))) part.costCenters.push(ref);
        parts.set(payer.accountKey, part);
        accounts.set(id, parts);
      }
    }
  }
  let leftOut = 0;
  const records = [...accounts.entries()]
    .sort(([a], [b]) => byText(a, b))
    .map(([accountId, parts]) => {
      const named = new Set([...parts.values()].flatMap((part) => part.costCenters.map(costCenterKey))).size;
      const record = recordOfParts(
        accountId,
        [...parts.values()].map((part) => ({ ...part, costCenters: fittingCostCenters(part.costCenters.sort(byIdAndName)) })),
      );
      leftOut += named - record.costCenters.length;
      return record;
    });
  return { records, paddedIds, leftOut };
}

/**
 * What to write for an account when some listed payers were not read in this run: the fresh
 * record plus the stored parts of those payers, which this run could not confirm or deny. The
 * parts of payers it read are replaced; those of payers no longer listed go. A stored record
 * without parts (written before they were kept) may hold an unread payer's cost centers, so it
 * is left as it was unless this run names every one of them again: undefined then.
 */
export function mergedRecord(fresh: OwnerRecord, stored: OwnerRecord | undefined, unread: ReadonlySet<string>): OwnerRecord | undefined {
  if (!stored) return fresh;
  if (!stored.parts) {
    const named = new Set(fresh.costCenters.map(costCenterKey));
    return stored.costCenters.every((c) => named.has(costCenterKey(c))) ? fresh : undefined;
  }
  const kept = stored.parts.filter((part) => unread.has(part.payer));
  return kept.length > 0 ? recordOfParts(fresh.accountId, [...(fresh.parts ?? []), ...kept]) : fresh;
}
