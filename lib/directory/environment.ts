import * as z from 'zod/mini';
import '../validation/messages.js';
import { platformEnvironmentSchema } from '../cost-api/environment.js';

/** Read with `readEnvironment` (lib/shared/environment.ts): the rotation's platform login, and the table it writes to. */
export const directoryEnvironmentSchema = z.extend(platformEnvironmentSchema, {
  DEDUP_TABLE_NAME: z.string({ error: 'is required' }).check(z.trim(), z.minLength(1, { error: 'is required' })),
});

export type DirectoryEnvironment = z.infer<typeof directoryEnvironmentSchema>;
