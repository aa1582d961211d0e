import type { Context, ScheduledEvent } from 'aws-lambda';
import { createDirectorySyncFromEnvironment } from '../../lib/directory/from-environment.js';
import type { DirectorySyncSummary } from '../../lib/directory/sync.js';
import { invocationBudget } from '../../lib/shared/deadline.js';

// Built once per container, so that runs in the same container share one pace.
const sync = createDirectorySyncFromEnvironment();

/** Invoked on the stack's DirectorySchedule (or by hand); the event carries nothing the run needs. */
export const handler = async (_event: ScheduledEvent | Record<string, never>, context: Context): Promise<DirectorySyncSummary> =>
  sync(invocationBudget(context));
