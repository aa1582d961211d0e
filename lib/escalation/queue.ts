import type { LazySqs } from '../aws/clients.js';
import { sendMessage } from '../queue/sqs.js';
import type { EscalationJob } from './job.js';

/**
 * Where an escalation waits until it is due: a delayed message on the retry queue in AWS, an
 * in-process timer under `npm start`. A job that comes back before it is due is scheduled again
 * with the time left.
 */
export interface EscalationQueue {
  schedule(job: EscalationJob, delaySeconds: number, signal?: AbortSignal): Promise<void>;
}

/** The retry queue (`DELIVERY_QUEUE_URL`), which delivery-retry reads: SQS delays each hop by 15 minutes at the most. */
export const sqsEscalationQueue = (sqs: LazySqs, queueUrl: string): EscalationQueue => ({
  schedule: (job, delaySeconds, signal) => sendMessage(sqs, queueUrl, JSON.stringify(job), { destination: job.from }, delaySeconds, signal),
});
