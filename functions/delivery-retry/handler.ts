import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { createRetryWorkerFromEnvironment } from '../../lib/retry/from-environment.js';
import { invocationBudget } from '../../lib/shared/deadline.js';

// Built once per container, so pacing and the configuration cache carry across batches.
const worker = createRetryWorkerFromEnvironment();

export const handler = async (event: SQSEvent, context: Context): Promise<SQSBatchResponse> =>
  worker(event.Records, invocationBudget(context), context.awsRequestId);
