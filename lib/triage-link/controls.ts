import type { AwsJsonCall } from '../aws/json-client.js';
import type { ChartLinkPort, DigestTriagePort, TriageControlsPort } from '../delivery/deliver.js';
import { anomalyRecordId } from '../message/anomaly.js';
import { kindOf } from '../notify/kinds.js';
import type { LinkSigner } from './lazy-links.js';
import { alertSubject } from './subject.js';

/** How long a read of the link key started ahead of time may take. */
const PRIME_TIMEOUT_MS = 3_000;

export interface TriageControlsOptions {
  /** TRIAGE_KEY_SECRET_ID: without it (and without `key`) messages carry no link. */
  keySecretId?: string | undefined;
  /** A key given directly: `npm start` makes one per session, as the stack generates its own. */
  key?: string | undefined;
  /** Where the key is read, when `keySecretId` names it. */
  secrets?: AwsJsonCall | undefined;
  now: () => number;
}

/**
 * The triage controls of each message: Slack app buttons when the app takes clicks, a signed
 * link to the triage page for every other destination. The signer, and the key it reads, load
 * with the first link; `prime` starts both at the start of a request, beside the other reads.
 */
export function triageControls(options: TriageControlsOptions): TriageControlsPort & { prime(): void } {
  const linksOn = options.keySecretId !== undefined || options.key !== undefined;
  let signer: Promise<LinkSigner> | undefined;
  const load = () => {
    signer ??= import('./lazy-links.js').then(({ createLinkSigner }) =>
      createLinkSigner({ secrets: options.secrets, secretId: options.keySecretId, key: options.key, now: options.now }),
    );
    // A failed import is tried again with the next message rather than remembered.
    signer.catch(() => {
      signer = undefined;
    });
    return signer;
  };
  const port: TriageControlsPort = ({ target, message, origin }) => {
    const { destination } = target;
    if (target.buttons)
      return { buttons: anomalyRecordId(message, target.name), about: { destination: target.name, ...alertSubject(message) } };
    const kind = kindOf(destination);
    if (!linksOn || origin === undefined || !kind.links(destination)) return undefined;
    const alert = {
      origin,
      anomalyId: anomalyRecordId(message, target.name),
      destination: target.name,
      message,
      threadKey: kind.threadOf?.(message),
    };
    return async (signal) => ({ link: await (await load()).link(alert, signal) });
  };
  // A digest offers its page wherever the destination's messages offer triage, buttons included:
  // an app's buttons act on one anomaly, the page on each one the digest names.
  const digest: DigestTriagePort = ({ target, origin, thread }) => {
    if (!linksOn || !(target.buttons || kindOf(target.destination).links(target.destination))) return undefined;
    return async (anomalies, signal) => (await load()).digestLink({ origin, destination: target.name, anomalies, thread }, signal);
  };
  // The picture needs the account (and the link key); which messages carry one, the delivery core decides.
  const chart: ChartLinkPort = ({ message, origin }) => {
    if (!linksOn || !message.payload.account_id?.trim()) return undefined;
    return async (signal) => (await load()).chartLink({ origin, message }, signal);
  };
  // Once the key is read it stays for the container: later requests start nothing, not even a timer.
  let primed = false;
  return Object.assign(port, {
    digest,
    chart,
    prime() {
      if (!linksOn || primed) return;
      primed = true;
      load()
        .then((loaded) => loaded.prime(AbortSignal.timeout(PRIME_TIMEOUT_MS)))
        .catch(() => {
          primed = false;
        });
    },
  });
}
