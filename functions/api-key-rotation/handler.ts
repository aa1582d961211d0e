import type { SecretsManagerRotationEvent } from 'aws-lambda';
import { createApiKeyRotationFromEnvironment } from '../../lib/rotation/from-environment.js';

// Built once per container; one function rotates any number of API-key secrets (one per selection).
const rotate = createApiKeyRotationFromEnvironment();

/** Invoked by Secrets Manager once per rotation step; the event is validated again inside, as any input is. */
export const handler = async (event: SecretsManagerRotationEvent): Promise<{ step: string; outcome: string }> => ({
  step: event.Step,
  outcome: await rotate(event),
});
