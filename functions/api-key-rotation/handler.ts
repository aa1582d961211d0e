import { createApiKeyRotationFromEnvironment } from '../../lib/rotation/from-environment.js';

// Built once per container; one function rotates any number of API-key secrets (one per selection).
const rotate = createApiKeyRotationFromEnvironment();

/** Invoked by Secrets Manager once per rotation step: {Step, SecretId, ClientRequestToken}. */
export const handler = async (event: unknown): Promise<{ step: unknown; outcome: string }> => {
  const outcome = await rotate(event);
  return { step: (event as { Step?: unknown }).Step, outcome };
};
