import type { RelayConfig, Route } from '../config/schema.js';
import type { WebhookMessage } from '../message/schema.js';

export interface RouteFacts {
  objectType: string;
  cloudProvider: string | undefined;
  accountId: string | undefined;
}

export function routeFacts(message: WebhookMessage): RouteFacts {
  return {
    objectType: message.metadata.object_type,
    cloudProvider: message.payload.cloud_provider_type,
    accountId: message.payload.account_id,
  };
}

const includes = (list: readonly string[] | undefined, value: string | undefined): boolean =>
  list === undefined || (value !== undefined && list.includes(value));

const includesIgnoringCase = (list: readonly string[] | undefined, value: string | undefined): boolean =>
  list === undefined || (value !== undefined && list.some((item) => item.toLowerCase() === value.toLowerCase()));

export function routeMatches(route: Route, facts: RouteFacts): boolean {
  const { objectType, cloudProvider, accountId } = route.when;
  return (
    includes(objectType, facts.objectType) &&
    includesIgnoringCase(cloudProvider, facts.cloudProvider) &&
    includes(accountId, facts.accountId?.trim())
  );
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
