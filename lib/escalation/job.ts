import type { AlertForTarget } from '../delivery/deliver.js';
import type { EscalationJob } from './job-schema.js';

export type { EscalationJob } from './job-schema.js';

/** The escalation job of an alert a destination holds: what the escalated message will say, and the opening it waits on. */
export function escalationJob(alert: AlertForTarget, firstSeen: number, updates: number, unposted?: true): EscalationJob {
  const { target, message, origin, costCenters } = alert;
  return {
    version: 2,
    kind: 'escalation',
    from: target.name,
    firstSeen,
    updates,
    message,
    // The inbound adapter makes an origin only of a domain name the schema accepts, so it is copied as it is.
    ...(origin !== undefined ? { origin } : {}),
    ...(costCenters?.length ? { costCenters: costCenters.map(({ id, name }) => ({ id, name })) } : {}),
    ...(unposted ? { unposted } : {}),
  };
}
