import * as z from 'zod/mini';
import '../validation/messages.js';
import type { IssueList } from '../shared/zod-issues.js';

// The platform sends identifiers as numbers in some places and strings in others.
const identifier = z.pipe(
  z.union([z.string().check(z.trim(), z.minLength(1)), z.number().check(z.int(), z.nonnegative())]),
  z.transform((v: string | number) => String(v)),
);
const optionalText = z.pipe(
  z.nullish(z.string()),
  z.transform((v: string | null | undefined) => v ?? ''),
);

export const generatedTokenSchema = z.object({
  Authorization: z.string().check(z.minLength(1)),
  apikey: z.string().check(z.minLength(1)),
});

// Seen as a number; text (`"0"`) is taken as its number, and anything else as unknown rather than fail the whole list.
const cloudTypeId = z.pipe(
  z.unknown(),
  z.transform((v: unknown) => {
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    return typeof n === 'number' && Number.isInteger(n) ? n : undefined;
  }),
);

export const payerAccountSchema = z.pipe(
  z.looseObject({
    accountKey: identifier,
    // A payer without a cloud account id (blank) is still a payer: directory-sync needs only its key.
    accountId: z.pipe(
      z.nullish(z.union([z.string(), z.number()])),
      z.transform((v: string | number | null | undefined) => (v === null || v === undefined ? undefined : String(v).trim() || undefined)),
    ),
    accountName: optionalText,
    cloudTypeId,
  }),
  z.transform((a) => ({
    /** The platform's own account key: the second API-key segment. */
    accountKey: a.accountKey,
    /** The cloud provider's account id. */
    accountId: a.accountId ?? '',
    accountName: a.accountName,
    cloudTypeId: a.cloudTypeId,
  })),
);

export type PayerAccount = z.infer<typeof payerAccountSchema>;

// The v2 record shape is not documented: the v1 list used `id`/`name`; `costCenterId`/`costCenterName` are accepted too.
const costCenterFields = {
  id: z.optional(identifier),
  costCenterId: z.optional(identifier),
  name: optionalText,
  costCenterName: optionalText,
};
const hasAnId = z.refine<{ id?: string | undefined; costCenterId?: string | undefined }>(
  (c) => c.id !== undefined || c.costCenterId !== undefined,
  {
    message: 'has no id',
    path: ['id'],
  },
);

export const costCenterSchema = z.pipe(
  z.looseObject({ ...costCenterFields, code: optionalText }).check(hasAnId),
  z.transform((c) => ({
    id: c.id ?? c.costCenterId ?? '',
    name: c.name || c.costCenterName,
    code: c.code,
  })),
);

export type CostCenter = z.infer<typeof costCenterSchema>;

// A cloud account id: text, or a number where the platform sent one (as digits, nothing padded here).
const cloudAccountId = z.pipe(
  z.union([z.string().check(z.trim(), z.minLength(1), z.maxLength(200)), z.number().check(z.int(), z.nonnegative())]),
  z.transform((v: string | number) => String(v)),
);
// The v1 list names a linked account in an object (`linkedAccountId`); other forms carry it in `accountId` or `id`.
const linkedAccountObject = z.pipe(
  z
    .looseObject({ linkedAccountId: z.nullish(cloudAccountId), accountId: z.nullish(cloudAccountId), id: z.nullish(cloudAccountId) })
    .check(z.refine((a) => Boolean(a.linkedAccountId ?? a.accountId ?? a.id), { message: 'names no linkedAccountId, accountId or id' })),
  z.transform((a) => a.linkedAccountId ?? a.accountId ?? a.id ?? ''),
);
const linkedAccounts = z.pipe(
  z.nullish(z.array(z.union([cloudAccountId, linkedAccountObject]))),
  z.transform((v: string[] | null | undefined) => v ?? []),
);

/**
 * A cost center with the cloud accounts it covers, for the owner directory. Unlike
 * costCenterSchema, a linked account in a form not listed here fails the record: a list read
 * only in part would write mappings nobody confirmed.
 */
export const coveringCostCenterSchema = z.pipe(
  z.looseObject({ ...costCenterFields, linkedAccounts, linkedAccountsIds: linkedAccounts }).check(hasAnId),
  z.transform((c) => ({
    id: c.id ?? c.costCenterId ?? '',
    // Trimmed, as a route names it: a trailing space in the platform must not make "Data Platform" miss.
    name: c.name.trim() || c.costCenterName.trim(),
    /** Cloud account ids, each once. */
    linkedAccounts: [...new Set([...c.linkedAccounts, ...c.linkedAccountsIds])],
  })),
);

export type CoveringCostCenter = z.infer<typeof coveringCostCenterSchema>;

/** Where an undocumented envelope may hold the list, in the order they are looked at. */
export const LIST_MEMBERS = ['data', 'accounts', 'costCenters', 'items'] as const;

export type ListPage = { ok: true; items: unknown[]; nextToken?: string } | { ok: false; problem: string };

/** A bare array, or an object with the array under one of LIST_MEMBERS and an optional `nextToken`. */
/** One row of the daily cost and usage: a day and its cost, a number or a numeric string (public clients saw both). */
export const dailyCostRowSchema = z.object({
  usage_date: z.string().check(z.minLength(1)),
  total_cost: z.union([z.number(), z.string().check(z.regex(/^-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?$/))]),
});
export type DailyCostRow = z.infer<typeof dailyCostRowSchema>;

/** A cost event as the platform answers its creation: its `uuid` at the top level or under `data`. */
export const createdEventSchema = z.union([
  z.object({ uuid: z.string().check(z.minLength(1)) }),
  z.object({ data: z.object({ uuid: z.string().check(z.minLength(1)) }) }),
]);

/** A cost event as the platform lists it: what finding one of ours again needs. */
export const listedEventSchema = z.object({
  uuid: z.string().check(z.minLength(1)),
  title: z.optional(z.nullable(z.string())),
  description: z.optional(z.nullable(z.string())),
});
export type ListedEvent = { uuid: string; title: string; description: string };

export function unwrapList(body: unknown): ListPage {
  if (Array.isArray(body)) return { ok: true, items: body };
  if (typeof body !== 'object' || body === null) return { ok: false, problem: `is ${body === null ? 'null' : typeof body}, not a list` };
  const record = body as Record<string, unknown>;
  const member = LIST_MEMBERS.find((name) => Array.isArray(record[name]));
  if (!member) {
    const names = Object.keys(record).slice(0, 10).join(', ') || 'none';
    return { ok: false, problem: `has no list under ${LIST_MEMBERS.join(', ')} (members: ${names})` };
  }
  const next = record['nextToken'];
  if (next !== undefined && next !== null && next !== '' && typeof next !== 'string') {
    return { ok: false, problem: 'has a nextToken that is not a string' };
  }
  return { ok: true, items: record[member] as unknown[], ...(typeof next === 'string' && next ? { nextToken: next } : {}) };
}

/** Field paths of the problems, never the values (records may carry names the operator considers private). */
export function describeProblems(error: IssueList, limit = 3): string {
  const parts = error.issues.slice(0, limit).map((issue) => {
    const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('') || '(record)';
    return `${path} ${issue.message}`;
  });
  const more = error.issues.length > limit ? ` and ${error.issues.length - limit} more` : '';
  return parts.join('; ') + more;
}
