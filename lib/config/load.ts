import { ConfigInvalidError } from './errors.js';
import { describeIssues, relayConfigSchema, type RelayConfig } from './schema.js';
import type { ConfigDocument } from './source.js';

export interface LoadedConfig {
  config: RelayConfig;
  currentSince?: Date;
  /**
   * The version before the current one, read on first use and then kept with this copy;
   * undefined when the store keeps none or it is not valid.
   */
  previous?: () => Promise<RelayConfig | undefined>;
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
  const { loadPrevious } = document;
  if (loadPrevious) {
    let previous: Promise<RelayConfig | undefined> | undefined;
    loaded.previous = () =>
      (previous ??= loadPrevious().then((text) => {
        if (text === undefined) return undefined;
        try {
          return parseRelayConfig(text);
        } catch {
          // An unusable previous version only means there is nothing to fall back to.
          return undefined;
        }
      }));
  }
  return loaded;
}
