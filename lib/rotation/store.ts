/** The versions of a secret and their staging labels, as DescribeSecret reports them. */
export interface SecretVersions {
  rotationEnabled: boolean;
  stagesByVersion: Record<string, string[]>;
}

/** The Secrets Manager operations the rotation protocol uses. */
export interface RotationStore {
  describe(secretId: string): Promise<SecretVersions>;
  /** The value of the version that carries `stage`. */
  readStage(secretId: string, stage: string): Promise<string>;
  /** That version's value; undefined when the version has none yet (RotateSecret creates it empty). */
  readVersion(secretId: string, versionId: string, stage: string): Promise<string | undefined>;
  putPending(secretId: string, versionId: string, value: string): Promise<void>;
  moveStage(secretId: string, stage: string, change: { moveTo?: string; removeFrom?: string }): Promise<void>;
}
