import * as z from 'zod/mini';
import '../validation/messages.js';
import { describeIssues } from '../shared/zod-issues.js';

/** What a run is asked to do: the schedule's hourly run, or the summaries of named destinations now. */
export type SummaryRequest = { kind: 'scheduled' } | { kind: 'now'; destinations: readonly string[] };

/** `{"summaryFor": ["finops", …]}`: post those destinations' summaries now (`npm run summary`). */
const summaryForSchema = z.strictObject({
  summaryFor: z.array(z.string().check(z.minLength(1))).check(z.minLength(1)),
});

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The request an invocation's event makes. An event that names `summaryFor` is read strictly, so
 * that a mistyped one is an error rather than a scheduled run; any other event (EventBridge's
 * scheduled event, an empty one) is the hourly run.
 */
export function summaryRequestOf(event: unknown): SummaryRequest | { kind: 'invalid'; problem: string } {
  if (!isObject(event) || !Object.hasOwn(event, 'summaryFor')) return { kind: 'scheduled' };
  const reading = summaryForSchema.safeParse(event);
  if (reading.success) return { kind: 'now', destinations: [...new Set(reading.data.summaryFor)] };
  const problems = describeIssues(reading.error).map((p) => `${p.path}: ${p.problem}`);
  return { kind: 'invalid', problem: `The event is not {"summaryFor": ["<destination>", …]}: ${problems.join('; ')}.` };
}
