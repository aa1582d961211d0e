import type { DeliveryLedger, EscalationClaimOutcome } from '../../lib/dedup/ledger.js';

/**
 * The claims of a grouped opening's escalation job, against either ledger, so that the in-memory
 * one and the DynamoDB one answer alike: unshown until the closing marks this opening shown (a mark
 * on another opening changes nothing), while a job that was not grouped claims it as before.
 */
export async function groupedEscalationClaims(ledger: DeliveryLedger, id: string): Promise<EscalationClaimOutcome[]> {
  const start = await ledger.startAnomaly(id);
  if (start.kind !== 'opened' || start.firstSeen === undefined) throw new Error('the anomaly was opened already');
  const { firstSeen } = start;
  const escalations = await ledger.escalations();
  const claim = { token: 'grouped-job', holdSeconds: 30, firstSeen, updates: 0, grouped: true as const };
  const answers: EscalationClaimOutcome[] = [await escalations.claimEscalation(id, claim)];
  await escalations.digestShown(id, firstSeen + 1);
  answers.push(await escalations.claimEscalation(id, claim));
  answers.push(await escalations.claimEscalation(id, { ...claim, token: 'queued-job', grouped: undefined }));
  await escalations.releaseEscalation(id, 'queued-job');
  await escalations.digestShown(id, firstSeen);
  answers.push(await escalations.claimEscalation(id, claim));
  return answers;
}

export const GROUPED_ESCALATION_ANSWERS: EscalationClaimOutcome[] = [
  { kind: 'unshown' },
  { kind: 'unshown' },
  { kind: 'claimed' },
  { kind: 'claimed' },
];
