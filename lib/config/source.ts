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

export function secretConfigSource(reader: SecretReader, secretId: string): ConfigSource {
  return async () => {
    const current = await reader.getSecretString(secretId);
    return { current: current.value, ...(current.createdDate ? { currentSince: current.createdDate } : {}) };
  };
}
