import type * as z from 'zod/mini';
import { platformEnvironmentSchema } from '../cost-api/environment.js';

/** Read with `readEnvironment` (lib/shared/environment.ts): the platform login and nothing else. */
export const rotationEnvironmentSchema = platformEnvironmentSchema;

export type RotationEnvironment = z.infer<typeof rotationEnvironmentSchema>;
