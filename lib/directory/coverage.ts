import type { CoveringCostCenter, PayerAccount } from '../cost-api/schema.js';
import type { CostCenterRef, OwnerRecord } from '../owners/directory.js';

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
/** As long as the owners file lets a name be. */
const MAX_NAME_LENGTH = 200;

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

/**
 * One record per cloud account that the lists read name: every cost center that covers it,
 * across payers (the same cost center once), and the earliest time those lists were read, so
 * that the record expires no later than its oldest part should.
 */
export function ownerRecords(payers: readonly PayerCoverage[]): { records: OwnerRecord[]; paddedIds: number } {
  const accounts = new Map<string, { costCenters: Map<string, CostCenterRef>; readAt: number }>();
  let paddedIds = 0;
  for (const { payer, readAt, costCenters } of payers) {
    for (const costCenter of costCenters) {
      const ref: CostCenterRef = { id: costCenter.id, name: costCenter.name.slice(0, MAX_NAME_LENGTH) };
      for (const linked of costCenter.linkedAccounts) {
        const { id, padded } = cloudAccountIdOf(linked, payer);
        if (padded) paddedIds++;
        const entry = accounts.get(id) ?? { costCenters: new Map(), readAt };
        // Two payers may number their cost centers alike: only the same id and name is the same one.
        entry.costCenters.set(`${ref.id}\u0000${ref.name}`, ref);
        entry.readAt = Math.min(entry.readAt, readAt);
        accounts.set(id, entry);
      }
    }
  }
  const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  const records = [...accounts.entries()]
    .sort(([a], [b]) => byText(a, b))
    .map(([accountId, { costCenters, readAt }]) => ({
      accountId,
      costCenters: [...costCenters.values()].sort((a, b) => byText(a.id, b.id) || byText(a.name, b.name)),
      readAt,
    }));
  return { records, paddedIds };
}
