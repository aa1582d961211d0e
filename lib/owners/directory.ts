import * as z from 'zod/mini';
import '../validation/messages.js';
import { type CostCenterRef, costCentersSchema } from '../message/cost-center.js';

// The owner directory: which of the platform's cost centers cover each cloud account, as
// directory-sync last read them. The relay routes by it (`when.costCenter`) and names the cost
// centers in every message. One record per cloud account; ids and names only, never a key.
export type { CostCenterRef };

/** The cost centers one payer's list named for an account, and when that list was read. */
export interface PayerPart {
  /** The payer's account key on the platform. */
  payer: string;
  costCenters: CostCenterRef[];
  /** Epoch seconds when the list answered. */
  readAt: number;
}

export interface OwnerRecord {
  /** The cloud account id (`payload.account_id`). */
  accountId: string;
  /** Every payer's, each once: what the relay routes by. */
  costCenters: CostCenterRef[];
  /** Epoch seconds: when the oldest of its parts was read. */
  readAt: number;
  /**
   * Which payer named which cost centers, so that a run which could not read a payer keeps that
   * payer's part. Items written before directory-sync kept parts have none.
   */
  parts?: PayerPart[];
}

/** A record outlives a few missed runs, then goes: a mapping nobody confirms for days is not kept. */
export const OWNER_RECORD_SECONDS = 3 * 86_400;

/** Its item id in the dedup table is this and the account id: prefixed, so it never meets a delivery, anomaly or group item. */
export const OWNER_RECORD_PREFIX = 'owner#';
export const ownerRecordId = (accountId: string): string => `${OWNER_RECORD_PREFIX}${accountId}`;

/** Where the relay reads an account's cost centers; undefined when the directory does not know it. */
export interface OwnerDirectory {
  read(accountId: string, signal?: AbortSignal): Promise<OwnerRecord | undefined>;
}

/** Where directory-sync keeps what it confirmed, and reads back the parts it could not confirm again. */
export interface OwnerStore {
  /** The record with its parts; undefined when there is none or it has expired. */
  read(accountId: string, signal?: AbortSignal): Promise<OwnerRecord | undefined>;
  write(record: OwnerRecord, signal?: AbortSignal): Promise<void>;
}

/**
 * An owners file, for `npm start` and `npm run config -- explain --owners`: the cloud account
 * ids and the cost centers that cover each, as directory-sync would have read them.
 */
export const ownersFileSchema = z.strictObject({
  accounts: z.record(z.string().check(z.minLength(1)), costCentersSchema),
});
export type OwnersFile = z.infer<typeof ownersFileSchema>;

/** The directory an owners file describes. */
export function fileOwnerDirectory(file: OwnersFile, readAt = 0): OwnerDirectory {
  return {
    async read(accountId) {
      const costCenters = Object.hasOwn(file.accounts, accountId) ? file.accounts[accountId] : undefined;
      return costCenters ? { accountId, costCenters, readAt } : undefined;
    },
  };
}
