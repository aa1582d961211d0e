import type { DeliveryLedger, EscalationClaimOutcome } from '../../lib/dedup/ledger.js';

/**
 * The claims of an unposted opening's escalation job (it waited in a group or on the retry queue), against either ledger, so that the in-memory
 * one and the DynamoDB one answer alike: unshown until the closing marks this opening shown (a mark
 * on another opening changes nothing), while a job of an opening posted at once claims it as before.
 */
export async function unpostedEscalationClaims(ledger: DeliveryLedger, id: string): Promise<EscalationClaimOutcome[]> {
  const start = await ledger.startAnomaly(id);
  if (start.kind !== 'opened' || start.firstSeen === undefined) throw new Error('the anomaly was opened already');
  const { firstSeen } = start;
  const escalations = await ledger.escalations();
  const claim = { token: 'waiting-job', holdSeconds: 30, firstSeen, updates: 0, unposted: true as const };
  const answers: EscalationClaimOutcome[] = [await escalations.claimEscalation(id, claim)];
  await escalations.openingShown(id, firstSeen + 1);
  answers.push(await escalations.claimEscalation(id, claim));
  answers.push(await escalations.claimEscalation(id, { ...claim, token: 'posted-job', unposted: undefined }));
  await escalations.releaseEscalation(id, 'posted-job');
  await escalations.openingShown(id, firstSeen);
  answers.push(await escalations.claimEscalation(id, claim));
  return answers;
}

export const UNPOSTED_ESCALATION_ANSWERS: EscalationClaimOutcome[] = [
  { kind: 'unshown' },
  { kind: 'unshown' },
  { kind: 'claimed' },
  { kind: 'claimed' },
];
