import * as z from 'zod/mini';
import '../validation/messages.js';

/** A cost center of the platform, as the owner directory names it (lib/owners): an id and a name, never a key. */
export interface CostCenterRef {
  id: string;
  name: string;
}

/**
 * A cost center as routes see it: also which payer's list named it (the platform's account key,
 * where the directory knows it), and whether another payer has a different cost center with the
 * same id, so that a route naming that id alone could mean either.
 */
export interface RoutingCostCenter extends CostCenterRef {
  payer?: string | undefined;
  idShared?: boolean | undefined;
}

/**
 * How much of an account's cost centers a message carries: a queued job (lib/delivery) accepts
 * no more, so a message names no more, and a retry is never parked for its cost centers. Routes
 * see every cost center (RoutingCostCenter); only what a message names is cut to these.
 */
export const COST_CENTER_LIMITS = { perAccount: 50, idLength: 200, nameLength: 200 } as const;

export const costCenterSchema = z.strictObject({
  id: z.string().check(z.minLength(1), z.maxLength(COST_CENTER_LIMITS.idLength)),
  name: z.string().check(z.maxLength(COST_CENTER_LIMITS.nameLength)),
}) satisfies z.ZodMiniType<CostCenterRef>;

/** The cost centers of an alert's account as the owner directory named them (ids and names). */
export const costCentersSchema = z.array(costCenterSchema).check(z.maxLength(COST_CENTER_LIMITS.perAccount));

/**
 * Those that fit the limits, in their order: a name is shortened, an id that does not fit is left
 * out (a shortened id would name another cost center), and only the first of too many are kept.
 */
export function fittingCostCenters(costCenters: readonly CostCenterRef[]): CostCenterRef[] {
  return costCenters
    .filter(({ id }) => id.length > 0 && id.length <= COST_CENTER_LIMITS.idLength)
    .slice(0, COST_CENTER_LIMITS.perAccount)
    .map(({ id, name }) => ({ id, name: name.slice(0, COST_CENTER_LIMITS.nameLength) }));
}
