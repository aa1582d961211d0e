import { ReasonedError } from '../shared/errors.js';
import type { CostCenter, PayerAccount } from '../cost-api/schema.js';

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

/** By the platform's accountKey, the cloud accountId, then accountName (exact, then ignoring case). */
export function selectAccount(accounts: PayerAccount[], wanted: string): PayerAccount {
  const target = wanted.trim();
  const lower = target.toLowerCase();
  const found = pickOne(accounts, [
    (a) => a.accountKey === target,
    (a) => a.accountId !== '' && a.accountId === target,
    (a) => a.accountName === target,
    (a) => a.accountName.toLowerCase() === lower,
  ]);
  const [only] = found;
  if (only && found.length === 1) return only;
  if (found.length > 1) {
    throw new SelectionError(
      `Account "${target}" matches ${found.length} accounts: ${listChoices(found, describeAccount)}. Select it by accountKey.`,
      'account_ambiguous',
    );
  }
  throw new SelectionError(
    `No payer account matches "${target}" (by accountKey, cloud account id or name). Available: ${listChoices(accounts, describeAccount)}.`,
    'account_not_found',
  );
}

/** By id, then name (exact, then ignoring case). An empty selection means all cost centers and never gets here. */
export function selectCostCenter(costCenters: CostCenter[], wanted: string): CostCenter {
  const target = wanted.trim();
  const lower = target.toLowerCase();
  const found = pickOne(costCenters, [
    (c) => c.id === target,
    (c) => c.name === target,
    (c) => c.name.toLowerCase() === lower,
  ]);
  const [only] = found;
  if (only && found.length === 1) return only;
  if (found.length > 1) {
    throw new SelectionError(
      `Cost center "${target}" matches ${found.length} cost centers: ${listChoices(found, describeCostCenter)}. Select it by id.`,
      'cost_center_ambiguous',
    );
  }
  throw new SelectionError(
    `No cost center matches "${target}" (by id or name). Available: ${listChoices(costCenters, describeCostCenter)}.`,
    'cost_center_not_found',
  );
}
