import * as z from 'zod/mini';
import '../validation/messages.js';

/** A value from the operator: text, or a number where they wrote an account key as one. */
const selector = z.pipe(
  z.nullish(z.union([z.string(), z.number().check(z.int(), z.nonnegative())])),
  z.transform((v: string | number | null | undefined) => (v === null || v === undefined ? '' : String(v).trim())),
);

/**
 * The inputs of the API-key secret (contract: "API-key secret (JSON), rotated"). Other members
 * are kept as they are, so that operators may add notes and later versions may add fields.
 */
export const apiKeySelectionSchema = z.looseObject({
  account: selector.check(
    z.refine((v: string) => v.length > 0, { message: 'is required: the accountKey, cloud account id or name of the payer account' }),
  ),
  costCenter: selector,
});

export type ApiKeySelection = z.infer<typeof apiKeySelectionSchema>;

/** What a rotation writes next to the selection. */
export interface ApiKeySecretOutputs {
  apikey: string;
  authorization: string;
  accountKey: string;
  accountName: string;
  costCenterId: string;
  costCenterName: string;
  issuedAt: string;
  expiresAt: string | null;
}

/** What testSecret needs from a pending value. */
export const pendingApiKeySchema = z.looseObject({
  apikey: z.string().check(z.minLength(1)),
  authorization: z.string().check(z.minLength(1)),
  expiresAt: z.nullish(z.string()),
});
