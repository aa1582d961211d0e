import { readFile } from 'node:fs/promises';
import { ConfigUnavailableError } from './errors.js';

/** One read of the configuration: the current document and, where the store keeps one, the previous. */
export interface ConfigDocument {
  current: string;
  /** When `current` became current; absent for sources without versions. */
  currentSince?: Date;
  previous?: string;
}

export type ConfigSource = () => Promise<ConfigDocument>;

export function fileConfigSource(path: string): ConfigSource {
  return async () => {
    try {
      return { current: await readFile(path, 'utf8') };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
      throw new ConfigUnavailableError(`Cannot read the configuration file (${code}).`, `file_${code}`);
    }
  };
}

/** The part of the Secrets Manager client the relay uses, so tests and tools can pass a real client. */
export interface SecretReader {
  getSecretString(secretId: string, versionStage?: string): Promise<{ value: string; createdDate?: Date }>;
}

export interface SecretConfigSourceOptions {
  /** The AWSPREVIOUS version exists but could not be read; its credentials are then not accepted. */
  onPreviousUnavailable?: (reason: string) => void;
}

/**
 * Reads AWSCURRENT (with its creation date, from which the grace for the previous
 * credentials runs) and AWSPREVIOUS, in parallel so that a cold start waits for one round
 * trip. The previous version is a convenience: when it is missing or unreadable, the
 * current one alone still serves.
 */
export function secretConfigSource(reader: SecretReader, secretId: string, options: SecretConfigSourceOptions = {}): ConfigSource {
  const readPrevious = () =>
    reader.getSecretString(secretId, 'AWSPREVIOUS').catch((error: unknown) => {
      const reason = error instanceof ConfigUnavailableError ? error.reason : 'unknown';
      // A secret that was never changed has no AWSPREVIOUS version: nothing to report.
      if (reason !== 'ResourceNotFoundException') options.onPreviousUnavailable?.(reason);
      return undefined;
    });
  return async () => {
    const [current, previous] = await Promise.all([reader.getSecretString(secretId), readPrevious()]);
    return {
      current: current.value,
      ...(current.createdDate ? { currentSince: current.createdDate } : {}),
      ...(previous ? { previous: previous.value } : {}),
    };
  };
}
