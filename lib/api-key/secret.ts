import * as z from 'zod';

/** A value from the operator: text, or a number where they wrote an account key as one. */
const selector = z
  .union([z.string(), z.number().int().nonnegative()])
  .nullish()
  .transform((v) => (v === null || v === undefined ? '' : String(v).trim()));

/**
 * The inputs of the API-key secret (contract: "API-key secret (JSON), rotated"). Other members
 * are kept as they are, so that operators may add notes and later versions may add fields.
 */
export const apiKeySelectionSchema = z.looseObject({
  account: selector.refine((v) => v.length > 0, {
    message: 'is required: the accountKey, cloud account id or name of the payer account',
  }),
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
  apikey: z.string().min(1),
  authorization: z.string().min(1),
  expiresAt: z.string().nullish(),
});

/** Field paths only: values of this secret are credentials. */
export function problemPaths(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'} ${issue.message}`);
}
