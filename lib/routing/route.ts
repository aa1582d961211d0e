import type { RelayConfig, Route } from '../config/schema.js';
import type { WebhookMessage } from '../message/schema.js';

export interface RouteFacts {
  objectType: string;
  cloudProvider: string | undefined;
  accountId: string | undefined;
  /** The cost centers that cover the account (lib/owners), where the directory was read and knows it. */
  costCenters?: ReadonlyArray<{ id: string; name: string }> | undefined;
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

/** A cost-center condition names a cost center of the account by id, or by name whatever its case. */
const coversAccount = (list: readonly string[] | undefined, costCenters: RouteFacts['costCenters']): boolean =>
  list === undefined ||
  (costCenters ?? []).some(({ id, name }) => list.some((item) => item === id || item.toLowerCase() === name.toLowerCase()));

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
