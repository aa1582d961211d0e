import { RotationError } from '../../lib/rotation/errors.js';
import type { RotationStore, SecretVersions } from '../../lib/rotation/store.js';

interface Version {
  value: string | undefined;
  stages: string[];
}

/** Secrets Manager's versions and staging labels in memory, as the rotation protocol sees them. */
export interface MemoryRotationStore extends RotationStore {
  versions: Map<string, Version>;
  rotationEnabled: boolean;
  /** Makes the named operation fail from now on. */
  failOn: Set<'describe' | 'readStage' | 'readVersion' | 'putPending' | 'moveStage'>;
  valueOf(stage: string): string | undefined;
  /** What RotateSecret does: a new, empty version labelled AWSPENDING. */
  startRotation(token: string): void;
}

export function memoryRotationStore(current: unknown): MemoryRotationStore {
  const versions = new Map<string, Version>([['v0', { value: JSON.stringify(current), stages: ['AWSCURRENT'] }]]);
  const failOn = new Set<'describe' | 'readStage' | 'readVersion' | 'putPending' | 'moveStage'>();
  const check = (operation: 'describe' | 'readStage' | 'readVersion' | 'putPending' | 'moveStage') => {
    if (failOn.has(operation))
      throw new RotationError(`Secrets Manager ${operation} failed (InternalServiceError).`, 'secrets_manager_error');
  };
  const withStage = (stage: string) => [...versions.entries()].find(([, v]) => v.stages.includes(stage));
  const store: MemoryRotationStore = {
    versions,
    rotationEnabled: true,
    failOn,
    valueOf: (stage) => withStage(stage)?.[1].value,
    startRotation(token) {
      versions.set(token, { value: undefined, stages: ['AWSPENDING'] });
    },
    async describe(): Promise<SecretVersions> {
      check('describe');
      return {
        rotationEnabled: store.rotationEnabled,
        stagesByVersion: Object.fromEntries([...versions].map(([id, v]) => [id, [...v.stages]])),
      };
    },
    async readStage(_secretId, stage) {
      check('readStage');
      const found = withStage(stage);
      if (!found?.[1].value) throw new RotationError(`No ${stage} value.`, 'no_secret_string');
      return found[1].value;
    },
    async readVersion(_secretId, versionId) {
      check('readVersion');
      return versions.get(versionId)?.value;
    },
    async putPending(_secretId, versionId, value) {
      check('putPending');
      const version = versions.get(versionId) ?? { value: undefined, stages: [] };
      versions.set(versionId, { value, stages: [...new Set([...version.stages, 'AWSPENDING'])] });
    },
    async moveStage(_secretId, stage, change) {
      check('moveStage');
      if (change.removeFrom) {
        const from = versions.get(change.removeFrom);
        if (from) from.stages = from.stages.filter((s) => s !== stage);
      }
      if (change.moveTo) {
        const to = versions.get(change.moveTo);
        if (to) to.stages = [...new Set([...to.stages, stage])];
        // AWSCURRENT moving leaves AWSPREVIOUS on the old version, as Secrets Manager does.
        if (stage === 'AWSCURRENT' && change.removeFrom) {
          for (const v of versions.values()) v.stages = v.stages.filter((s) => s !== 'AWSPREVIOUS');
          versions.get(change.removeFrom)?.stages.push('AWSPREVIOUS');
        }
      }
    },
  };
  return store;
}
