import { type AwsJsonCall, AwsServiceError } from '../../lib/aws/json-client.js';

/** Secrets Manager in memory: versions with their stages, read as the JSON protocol answers GetSecretValue. */
export interface MemorySecrets {
  call: AwsJsonCall;
  /** A new current version (the previous one becomes AWSPREVIOUS), as PutSecretValue makes it. */
  put(id: string, value: string): void;
  current(id: string): string | undefined;
}

export function memorySecrets(options: { now: () => number; fault?: (operation: string) => Promise<never> | undefined }): MemorySecrets {
  const secrets = new Map<string, { current: { value: string; created: number }; previous?: { value: string; created: number } }>();
  const call: AwsJsonCall = async (operation, input, signal) => {
    const hang = options.fault?.(operation);
    if (hang) {
      return new Promise((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason), { once: true }));
    }
    if (operation !== 'GetSecretValue') throw new AwsServiceError('UnknownOperationException', 400, {});
    const secret = secrets.get(String(input['SecretId']));
    const stage = input['VersionStage'] ?? 'AWSCURRENT';
    const version = stage === 'AWSPREVIOUS' ? secret?.previous : stage === 'AWSCURRENT' ? secret?.current : undefined;
    if (!version) throw new AwsServiceError('ResourceNotFoundException', 400, {});
    return { ARN: input['SecretId'], SecretString: version.value, CreatedDate: version.created / 1000, VersionStages: [stage] };
  };
  return {
    call,
    put(id, value) {
      const existing = secrets.get(id);
      const version = { value, created: options.now() };
      secrets.set(id, existing ? { current: version, previous: existing.current } : { current: version });
    },
    current: (id) => secrets.get(id)?.current.value,
  };
}
