// How `npm run owners` and `npm run config -- explain` word the owner directory: a cost center
// as a route may name it, how old a record is, and how directory-sync's last run ended.
import type { LastRun } from '../lib/directory/last-run.js';
import { OWNER_RECORD_SECONDS, type RoutingCostCenter } from '../lib/owners/directory.js';
import { payerCostCenterId } from '../lib/routing/route.js';

/** `Data Platform (cc-42)`; where another payer uses the id too, the form a route must use: `Data (12345:7)`. */
export function costCenterLabel({ id, name, payer, idShared }: RoutingCostCenter): string {
  return `${name || id} (${idShared && payer !== undefined ? payerCostCenterId(payer, id) : id})`;
}

/** `40 min`, `71 h`, `5 d 2 h`: hours while a record lives, so that its age and its three days compare at a glance. */
function duration(seconds: number): string {
  const minutes = Math.max(0, Math.round(seconds / 60));
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 100 ? `${hours} h` : `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** `read 71 h ago, expires in 1 h`: a record nobody renewed for days must not read like a fresh one. */
export function recordAge(readAt: number, now = nowSeconds()): string {
  return `read ${duration(now - readAt)} ago, expires in ${duration(readAt + OWNER_RECORD_SECONDS - now)}`;
}

/** One line on directory-sync's last run, or that none is known. */
export function lastRunText(run: LastRun | undefined, now = nowSeconds()): string {
  if (!run) {
    return 'directory-sync has kept no last run yet (has it run since this version was deployed? its log says what each run did).';
  }
  const when = new Date(run.at * 1000).toISOString().replace('.000Z', 'Z');
  const counts = [
    `${run.payersRead} of ${run.payers} payer${run.payers === 1 ? '' : 's'} read`,
    `${run.accountsWritten} account${run.accountsWritten === 1 ? '' : 's'} written`,
    ...(run.accountsRemoved > 0 ? [`${run.accountsRemoved} no longer covered`] : []),
    ...(run.accountsNotWritten > 0 ? [`${run.accountsNotWritten} not written`] : []),
  ].join(', ');
  const renewed = run.outcome === 'succeeded' || run.outcome === 'continued';
  const warning = renewed ? '' : ' Records are renewed only by succeeded or continued runs: read directory-sync’s log.';
  return `directory-sync last ran ${duration(now - run.at)} ago (${when}): ${run.outcome}; ${counts}.${warning}`;
}
