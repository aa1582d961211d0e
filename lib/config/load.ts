import { ConfigInvalidError } from './errors.js';
import { describeIssues, relayConfigSchema, type RelayConfig } from './schema.js';
import type { ConfigDocument } from './source.js';

export interface LoadedConfig {
  config: RelayConfig;
  currentSince?: Date;
  /** The version before the current one, when the store keeps it and it is still valid. */
  previous?: RelayConfig;
}

export function parseRelayConfig(text: string): RelayConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigInvalidError([{ path: '(root)', problem: 'is not valid JSON' }]);
  }
  const result = relayConfigSchema.safeParse(json);
  if (!result.success) throw new ConfigInvalidError(describeIssues(result.error));
  return result.data;
}

export function parseConfigDocument(document: ConfigDocument): LoadedConfig {
  const loaded: LoadedConfig = { config: parseRelayConfig(document.current) };
  if (document.currentSince) loaded.currentSince = document.currentSince;
  if (document.previous !== undefined) {
    try {
      loaded.previous = parseRelayConfig(document.previous);
    } catch {
      // An unusable previous version only means there is nothing to fall back to.
    }
  }
  return loaded;
}
