import type { Context, ScheduledEvent } from 'aws-lambda';
import { invocationBudget } from '../../lib/shared/deadline.js';
import { createSummaryFromEnvironment } from '../../lib/summary/from-environment.js';
import type { SummaryAnswer } from '../../lib/summary/run.js';

// Built once per container: the configuration and the triage key are cached across runs.
const summary = createSummaryFromEnvironment();

/** Invoked hourly by the stack's schedule, or with `{"summaryFor": ["<destination>"]}` to post those now. */
export const handler = async (event: ScheduledEvent | { summaryFor: string[] }, context: Context): Promise<SummaryAnswer> =>
  summary(event, invocationBudget(context), context.awsRequestId);
