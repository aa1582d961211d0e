import * as z from 'zod/mini';
import '../validation/messages.js';
import { type CostCenterRef, fittingCostCenters, type RoutingCostCenter } from '../message/cost-center.js';

// The owner directory: which of the platform's cost centers cover each cloud account, as
// directory-sync last read them. The relay routes by it (`when.costCenter`) and names the cost
// centers in every message. One record per cloud account; ids, names and payer account keys
// only, never a token, key or password.
export type { CostCenterRef, RoutingCostCenter };

/** A cost center in a payer's part: `idShared` when another payer has a different cost center with the same id. */
export type PartCostCenter = CostCenterRef & { idShared?: boolean | undefined };

/** The cost centers one payer's lists named for an account, and when they were read. */
export interface PayerPart {
  /**
   * The payer's account key on the platform: the second segment of an account-scoped API key
   * (`<user_key>:<accountKey>:`), with which other functions call the platform for this account.
   */
  accountKey: string;
  /** Every one that covers the account, however many: routes see them all. */
  costCenters: PartCostCenter[];
  /** Epoch seconds when the list answered. */
  readAt: number;
}

export interface OwnerRecord {
  /** The cloud account id (`payload.account_id`). */
  accountId: string;
  /** Every payer's, each once, as many as a message names (COST_CENTER_LIMITS). */
  costCenters: CostCenterRef[];
  /** Epoch seconds: when the oldest of its parts was read. */
  readAt: number;
  /**
   * Which payer named which cost centers, so that a run which could not read a payer keeps that
   * payer's part, and routes can tell payers apart. Items written before directory-sync kept
   * parts have none.
   */
  parts?: PayerPart[];
}

/** An account's owners as the relay, `config explain` and `npm run owners` take them. */
export interface AccountOwners {
  accountId: string;
  /** What a message names: within what a queued retry of the alert carries. */
  costCenters: CostCenterRef[];
  /** Every cost center that covers the account, with its payer where known: what routes match. */
  routing: RoutingCostCenter[];
  /** Epoch seconds when its oldest part was read; undefined for an owners file, which has no time. */
  readAt?: number | undefined;
}

/**
 * The payer whose account-scoped key reads the account's own data on the platform (its cost
 * trend, its cost events): the first that covers it. Undefined where the directory knows none.
 */
export const payerOf = (owners: AccountOwners | undefined): string | undefined => owners?.routing.find((c) => c.payer)?.payer;

/** A record outlives a few missed runs, then goes: a mapping nobody confirms for days is not kept. */
export const OWNER_RECORD_SECONDS = 3 * 86_400;

/** Its item id in the dedup table is this and the account id: prefixed, so it never meets a delivery, anomaly or group item. */
export const OWNER_RECORD_PREFIX = 'owner#';
export const ownerRecordId = (accountId: string): string => `${OWNER_RECORD_PREFIX}${accountId}`;

/**
 * The ids that name more than one cost center among those given: payers number their cost
 * centers each on their own, so the same id with another name is another payer's cost center.
 * Only the same id and name is the same one.
 */
export function sharedIds(costCenters: Iterable<CostCenterRef>): Set<string> {
  const names = new Map<string, string>();
  const shared = new Set<string>();
  for (const { id, name } of costCenters) {
    const seen = names.get(id);
    if (seen === undefined) names.set(id, name);
    else if (seen !== name) shared.add(id);
  }
  return shared;
}

/** What readers take of a record: with parts, every cost center with its payer; without, the list it holds. */
export function ownersOfRecord(record: OwnerRecord): AccountOwners {
  const routing: RoutingCostCenter[] = record.parts
    ? record.parts.flatMap((part) => part.costCenters.map((c) => ({ ...c, payer: part.accountKey })))
    : record.costCenters;
  return { accountId: record.accountId, costCenters: record.costCenters, routing, readAt: record.readAt };
}

/** Where the relay reads an account's cost centers; undefined when the directory does not know it. */
export interface OwnerDirectory {
  read(accountId: string, signal?: AbortSignal): Promise<AccountOwners | undefined>;
}

/** Where directory-sync keeps what it confirmed, and reads back the parts it could not confirm again. */
export interface OwnerStore {
  /** The record with its parts; undefined when there is none or it has expired. */
  read(accountId: string, signal?: AbortSignal): Promise<OwnerRecord | undefined>;
  write(record: OwnerRecord, signal?: AbortSignal): Promise<void>;
  /** An account no payer covers any more. */
  remove(accountId: string, signal?: AbortSignal): Promise<void>;
}

const ownersFileCostCenterSchema = z.strictObject({
  id: z.string().check(z.trim(), z.minLength(1)),
  name: z.string().check(z.trim()),
  /** The payer's account key, as directory-sync would have read it; lets a route name `<payer>:<id>`. */
  payer: z.optional(
    z.string().check(
      z.trim(),
      z.minLength(1),
      z.refine((key) => !key.includes(':'), { message: 'is an account key, which has no ":"' }),
    ),
  ),
});

/**
 * An owners file, for `npm start` and `npm run config -- explain --owners`: the cloud account
 * ids and the cost centers that cover each, as directory-sync would have read them.
 */
export const ownersFileSchema = z.strictObject({
  accounts: z.record(z.string().check(z.trim(), z.minLength(1)), z.array(ownersFileCostCenterSchema)),
});
export type OwnersFile = z.infer<typeof ownersFileSchema>;

/** Every account an owners file describes, as readers take them; an id named with two names is shared. */
export function ownersOfFile(file: OwnersFile): AccountOwners[] {
  const shared = sharedIds(Object.values(file.accounts).flat());
  return Object.entries(file.accounts).map(([accountId, entries]) => {
    const routing = entries.map(({ id, name, payer }) => ({
      id,
      name,
      ...(payer === undefined ? {} : { payer }),
      ...(shared.has(id) ? { idShared: true } : {}),
    }));
    const named = new Map(entries.map(({ id, name }) => [`${id}\u0000${name}`, { id, name }]));
    return { accountId, costCenters: fittingCostCenters([...named.values()]), routing };
  });
}

/** The directory an owners file describes. */
export function fileOwnerDirectory(file: OwnersFile): OwnerDirectory {
  const accounts = new Map(ownersOfFile(file).map((owners) => [owners.accountId, owners]));
  return {
    async read(accountId) {
      return accounts.get(accountId);
    },
  };
}
