import type { RelayConfig, Route } from '../config/schema.js';
import type { RoutingCostCenter } from '../message/cost-center.js';
import type { WebhookMessage } from '../message/schema.js';

export interface RouteFacts {
  objectType: string;
  cloudProvider: string | undefined;
  accountId: string | undefined;
  /** Every cost center that covers the account (lib/owners), where the directory was read and knows it. */
  costCenters?: readonly RoutingCostCenter[] | undefined;
}

export function routeFacts(message: WebhookMessage, costCenters?: RouteFacts['costCenters']): RouteFacts {
  return {
    objectType: message.metadata.object_type,
    cloudProvider: message.payload.cloud_provider_type,
    accountId: message.payload.account_id,
    ...(costCenters ? { costCenters } : {}),
  };
}

/** Whether any route names cost centers: only then is the owner directory read for a delivery. */
export const routesByCostCenter = (config: Pick<RelayConfig, 'routes'>): boolean =>
  config.routes.some((route) => route.when.costCenter !== undefined);

/** How a route names one payer's cost center whatever other payers number theirs: `<payer account key>:<id>`. */
export const payerCostCenterId = (payer: string, id: string): string => `${payer}:${id}`;

/**
 * Whether a route's entry names the cost center: by name whatever its case; by `<payer>:<id>`; or
 * by its id alone, unless another payer has a different cost center with that id (which one the
 * entry meant cannot be told, so it matches neither: `ambiguousEntries` says so).
 */
function names(entry: string, { id, name, payer, idShared }: RoutingCostCenter): boolean {
  const wanted = entry.trim();
  return (
    (name.trim() !== '' && wanted.toLowerCase() === name.trim().toLowerCase()) ||
    (payer !== undefined && wanted === payerCostCenterId(payer, id)) ||
    (wanted === id && !idShared)
  );
}

/** A cost-center condition names a cost center of the account. */
const coversAccount = (list: readonly string[] | undefined, costCenters: RouteFacts['costCenters']): boolean =>
  list === undefined || (costCenters ?? []).some((costCenter) => list.some((entry) => names(entry, costCenter)));

/**
 * The entries of cost-center conditions that are the id of one of the account's cost centers but
 * match nothing because other payers use that id too, each with how to name it instead.
 */
export function ambiguousEntries(config: Pick<RelayConfig, 'routes'>, facts: RouteFacts): Array<{ entry: string; instead: string[] }> {
  const found = new Map<string, string[]>();
  for (const entry of config.routes.flatMap((route) => route.when.costCenter ?? [])) {
    const wanted = entry.trim();
    const meant = (facts.costCenters ?? []).filter((c) => c.idShared && c.id === wanted && !names(entry, c));
    if (meant.length === 0 || found.has(wanted)) continue;
    found.set(
      wanted,
      meant.map((c) => (c.payer === undefined ? c.name || c.id : payerCostCenterId(c.payer, c.id))),
    );
  }
  return [...found].map(([entry, instead]) => ({ entry, instead }));
}

const includes = (list: readonly string[] | undefined, value: string | undefined): boolean =>
  list === undefined || (value !== undefined && list.includes(value));

const includesIgnoringCase = (list: readonly string[] | undefined, value: string | undefined): boolean =>
  list === undefined || (value !== undefined && list.some((item) => item.toLowerCase() === value.toLowerCase()));

export function routeMatches(route: Route, facts: RouteFacts): boolean {
  const { objectType, cloudProvider, accountId, costCenter } = route.when;
  return (
    includes(objectType, facts.objectType) &&
    includesIgnoringCase(cloudProvider, facts.cloudProvider) &&
    includes(accountId, facts.accountId?.trim()) &&
    coversAccount(costCenter, facts.costCenters)
  );
}

/** Each destination a delivery reaches, and why: the routes (by index) that send it there, or none for `default`. */
export function explainRoutes(config: Pick<RelayConfig, 'routes'>, facts: RouteFacts): Array<{ destination: string; routes: number[] }> {
  const reached = new Map<string, number[]>();
  config.routes.forEach((route, index) => {
    if (!routeMatches(route, facts)) return;
    for (const name of route.to) reached.set(name, [...(reached.get(name) ?? []), index]);
  });
  return reached.size > 0
    ? [...reached].map(([destination, routes]) => ({ destination, routes }))
    : [{ destination: 'default', routes: [] }];
}

/** Destination names for a delivery: every matching route's, each once; `default` when none match. */
export function selectDestinations(config: Pick<RelayConfig, 'routes'>, facts: RouteFacts): string[] {
  const names = new Set<string>();
  for (const route of config.routes) {
    if (!routeMatches(route, facts)) continue;
    for (const name of route.to) names.add(name);
  }
  return names.size > 0 ? [...names] : ['default'];
}
