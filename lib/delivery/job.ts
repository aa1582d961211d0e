import type { AnomalyPost, EscalationMark } from '../chat/service.js';
import type { CostCenterRef } from '../message/cost-center.js';
import type { WebhookMessage } from '../message/schema.js';
import type { DeliveryJob } from './job-schema.js';
import { originSchema } from './origin.js';

export type { DeliveryJob } from './job-schema.js';

export function newJob(
  deliveryId: string,
  destination: string,
  message: WebhookMessage,
  reason: string,
  now: number,
  anomaly?: AnomalyPost,
  origin?: string,
  quiet?: boolean,
  costCenters?: readonly CostCenterRef[],
  escalation?: EscalationMark,
): DeliveryJob {
  return {
    version: 2,
    deliveryId,
    destination,
    attempt: 1,
    firstAttemptAt: new Date(now).toISOString(),
    lastReason: reason,
    message,
    ...(anomaly?.kind === 'follow_up' ? { anomaly } : {}),
    ...(origin !== undefined && originSchema.safeParse(origin).success ? { origin } : {}),
    ...(quiet ? { quiet: true as const } : {}),
    ...(costCenters?.length ? { costCenters: costCenters.map(({ id, name }) => ({ id, name })) } : {}),
    ...(escalation ? { escalation: { from: escalation.from, afterMinutes: escalation.afterMinutes } } : {}),
  };
}
