import * as z from 'zod';
import { DEFAULT_COST_API_BASE_URL, isAllowedBaseUrl } from '../cost-api/base-url.js';
import { parseLogLevel } from '../log/logger.js';

export const rotationEnvironmentSchema = z.object({
  COST_API_BASE_URL: z
    .string()
    .trim()
    .default(DEFAULT_COST_API_BASE_URL)
    .refine(isAllowedBaseUrl, { message: 'must be an https URL without query (plain http only for loopback hosts)' }),
  COST_API_CREDENTIALS_SECRET_ID: z.string({ error: 'is required' }).trim().min(1, { error: 'is required' }),
  /** Per platform call and attempt. */
  COST_API_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  COST_API_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(5).default(3),
  LOG_LEVEL: z.string().optional().transform(parseLogLevel),
});

export type RotationEnvironment = z.infer<typeof rotationEnvironmentSchema>;

export type EnvironmentReading = { ok: true; settings: RotationEnvironment } | { ok: false; problems: string[] };

/** Names the variables that are wrong, never their values. */
export function readRotationEnvironment(env: Record<string, string | undefined>): EnvironmentReading {
  // An empty variable (a template parameter left blank) means "use the default".
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const result = rotationEnvironmentSchema.safeParse(present);
  if (result.success) return { ok: true, settings: result.data };
  return { ok: false, problems: result.error.issues.map((i) => `${String(i.path[0])} ${i.message}`) };
}
