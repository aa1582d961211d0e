import type { CostCenter, PayerAccount } from '../cost-api/schema.js';
import { ReasonedError } from '../shared/errors.js';

export type SelectionFailure = 'account_not_found' | 'account_ambiguous' | 'cost_center_not_found' | 'cost_center_ambiguous';

/**
 * The selection names nothing, or more than one thing. The message lists the choices (names
 * and keys are what the operator writes into the selection; they are not secrets).
 */
export class SelectionError extends ReasonedError<SelectionFailure> {}

const MAX_LISTED = 25;

function listChoices<T>(items: T[], describe: (item: T) => string): string {
  if (items.length === 0) return 'none';
  const shown = items.slice(0, MAX_LISTED).map(describe).join('; ');
  return items.length > MAX_LISTED ? `${shown}; and ${items.length - MAX_LISTED} more` : shown;
}

export const describeAccount = (a: PayerAccount): string =>
  `"${a.accountName || '(no name)'}" (accountKey ${a.accountKey}${a.accountId ? `, cloud account ${a.accountId}` : ''})`;

export const describeCostCenter = (c: CostCenter): string => `"${c.name || '(no name)'}" (id ${c.id})`;

/**
 * Finds the one match, trying each way of naming in turn: the first way that matches anything
 * decides, so an account key never loses to an account that happens to be named like it.
 */
function pickOne<T>(items: T[], ways: Array<(item: T) => boolean>): T[] {
  for (const matches of ways) {
    const found = items.filter(matches);
    if (found.length > 0) return found;
  }
  return [];
}

interface Selection<T> {
  /** Matchers from the most to the least specific; the first that finds anything decides. */
  matchers: Array<(item: T) => boolean>;
  describe: (item: T) => string;
  ambiguous: { reason: SelectionFailure; message: (count: number, choices: string) => string };
  notFound: { reason: SelectionFailure; message: (choices: string) => string };
}

function selectExactlyOne<T>(items: T[], selection: Selection<T>): T {
  const found = pickOne(items, selection.matchers);
  const [only] = found;
  if (only && found.length === 1) return only;
  if (found.length > 1) {
    throw new SelectionError(selection.ambiguous.message(found.length, listChoices(found, selection.describe)), selection.ambiguous.reason);
  }
  throw new SelectionError(selection.notFound.message(listChoices(items, selection.describe)), selection.notFound.reason);
}

/** By the platform's accountKey, the cloud accountId, then accountName (exact, then ignoring case). */
export function selectAccount(accounts: PayerAccount[], wanted: string): PayerAccount {
  const target = wanted.trim();
  const lower = target.toLowerCase();
  return selectExactlyOne(accounts, {
    matchers: [
      (a) => a.accountKey === target,
      (a) => a.accountId !== '' && a.accountId === target,
      (a) => a.accountName === target,
      (a) => a.accountName.toLowerCase() === lower,
    ],
    describe: describeAccount,
    ambiguous: {
      reason: 'account_ambiguous',
      message: (count, choices) => `Account "${target}" matches ${count} accounts: ${choices}. Select it by accountKey.`,
    },
    notFound: {
      reason: 'account_not_found',
      message: (choices) => `No payer account matches "${target}" (by accountKey, cloud account id or name). Available: ${choices}.`,
    },
  });
}

/** By id, then name (exact, then ignoring case). An empty selection means all cost centers and never gets here. */
export function selectCostCenter(costCenters: CostCenter[], wanted: string): CostCenter {
  const target = wanted.trim();
  const lower = target.toLowerCase();
  return selectExactlyOne(costCenters, {
    matchers: [(c) => c.id === target, (c) => c.name === target, (c) => c.name.toLowerCase() === lower],
    describe: describeCostCenter,
    ambiguous: {
      reason: 'cost_center_ambiguous',
      message: (count, choices) => `Cost center "${target}" matches ${count} cost centers: ${choices}. Select it by id.`,
    },
    notFound: {
      reason: 'cost_center_not_found',
      message: (choices) => `No cost center matches "${target}" (by id or name). Available: ${choices}.`,
    },
  });
}
