import { jsonSyntaxError, parseJson } from '../shared/json.js';
import { describeIssues } from '../shared/zod-issues.js';
import { ConfigInvalidError } from './errors.js';
import { type RelayConfig, relayConfigSchema } from './schema.js';

/** A validated configuration and, for versioned stores, since when it is current. */
export interface LoadedConfig {
  config: RelayConfig;
  currentSince?: Date;
}

export function parseRelayConfig(text: string): RelayConfig {
  const json = parseJson(text);
  if (!json.ok) {
    const where = jsonSyntaxError(text);
    throw new ConfigInvalidError([
      where
        ? { path: `line ${where.line}, column ${where.column}`, problem: `not valid JSON: ${where.problem}` }
        : { path: '(root)', problem: 'is not valid JSON' },
    ]);
  }
  // zod skips an own `__proto__` key of a record, so such a destination would vanish without a word.
  const destinations = (json.value as { destinations?: unknown } | null)?.destinations;
  if (typeof destinations === 'object' && destinations !== null && Object.hasOwn(destinations, '__proto__')) {
    throw new ConfigInvalidError([{ path: 'destinations.__proto__', problem: 'is not a usable destination name' }]);
  }
  const result = relayConfigSchema.safeParse(json.value);
  if (!result.success) throw new ConfigInvalidError(describeIssues(result.error, relayConfigSchema));
  return result.data;
}
