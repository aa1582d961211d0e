import type { RetryJobKind } from './job-kind.js';
import { costEvents } from './jobs/cost-event.js';
import { deliveries } from './jobs/delivery.js';
import { escalations } from './jobs/escalation.js';
import { groupClosings } from './jobs/group-closing.js';

/**
 * Every kind of job on the retry queue, one line each: the one place a kind of job is registered
 * (a module of its own in lib/retry/jobs/, which only this list imports). The batch loop asks
 * them in this order whether a message is theirs, and names none; a message none of them reads is
 * parked as malformed. Their schemas are strict and tell their jobs apart, so no message is two
 * kinds' (test/unit/retry-jobs.test.ts).
 */
export const RETRY_JOBS: readonly RetryJobKind[] = [deliveries, groupClosings, escalations, costEvents];
