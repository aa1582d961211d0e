import type { DeliveryJob } from './job.js';

/** Where a delivery waits for a later attempt (the SQS retry queue). */
export interface RetryQueue {
  enqueue(job: DeliveryJob, delaySeconds: number, signal?: AbortSignal): Promise<void>;
}

/** Where an alert that cannot be delivered is parked for a human, with the reason. */
export interface DeadLetters {
  park(body: string, reason: string, destination?: string, signal?: AbortSignal): Promise<void>;
}
