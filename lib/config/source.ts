import { readFile } from 'node:fs/promises';
import { ConfigUnavailableError } from './errors.js';

/** One read of the configuration: the current document and, where the store keeps one, the previous. */
export interface ConfigDocument {
  current: string;
  /** When `current` became current; absent for sources without versions. */
  currentSince?: Date;
  /** Reads the version before the current one; undefined when there is none. */
  loadPrevious?: () => Promise<string | undefined>;
}

export type ConfigSource = () => Promise<ConfigDocument>;

export function fileConfigSource(path: string): ConfigSource {
  return async () => {
    try {
      return { current: await readFile(path, 'utf8') };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
      throw new ConfigUnavailableError(`Cannot read the configuration file (${code}).`, `file_${code}`, { cause: error });
    }
  };
}

/** The part of the Secrets Manager client the relay uses, so tests and tools can pass a real client. */
export interface SecretReader {
  getSecretString(secretId: string, versionStage?: string): Promise<{ value: string; createdDate?: Date }>;
}

export interface SecretConfigSourceOptions {
  /** Read AWSPREVIOUS as well; false for readers that do not authenticate anything. */
  readPrevious?: boolean;
  /** The AWSPREVIOUS version exists but could not be read; its credentials are then not accepted. */
  onPreviousUnavailable?: (reason: string) => void;
}

/**
 * Reads AWSCURRENT with its creation date, from which the grace for the previous
 * credentials runs. AWSPREVIOUS is read only when a request fails the current credentials,
 * so the normal path costs one Secrets Manager call per TTL. The previous version is a
 * convenience: when it is missing or unreadable, the current one alone still serves.
 */
export function secretConfigSource(reader: SecretReader, secretId: string, options: SecretConfigSourceOptions = {}): ConfigSource {
  const loadPrevious = () =>
    reader.getSecretString(secretId, 'AWSPREVIOUS').then(
      (previous) => previous.value,
      (error: unknown) => {
        const reason = error instanceof ConfigUnavailableError ? error.reason : 'unknown';
        // A secret that was never changed has no AWSPREVIOUS version: nothing to report.
        if (reason !== 'ResourceNotFoundException') options.onPreviousUnavailable?.(reason);
        return undefined;
      },
    );
  return async () => {
    const current = await reader.getSecretString(secretId);
    return {
      current: current.value,
      ...(current.createdDate ? { currentSince: current.createdDate } : {}),
      ...(options.readPrevious === false ? {} : { loadPrevious }),
    };
  };
}
