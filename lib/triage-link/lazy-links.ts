// Imported with import() by controls.ts on the first message that needs a triage link, so a
// relay without a link key never loads it. It is bundled on its own: what it shares with the
// cold path (the Secrets Manager client) comes in as arguments.
import type { AwsJsonCall } from '../aws/json-client.js';
import type { DigestPageFields } from '../format/digest-token.js';
import type { WebhookMessage } from '../message/schema.js';
import { alertDay, chartLink } from './chart.js';
import { TriageKeyInvalidError, triageKeyReader } from './key.js';
import { accountLabel, signDigestToken, type TriageTokenFields, triageLink } from './sign.js';
import { ACCOUNT_ID_MAX, ACCOUNT_MAX, oneLine as line, TITLE_MAX } from './subject.js';

/** What a link shows on the page: one line each, short, so the link stays short. */

export interface LinkAlert {
  origin: string;
  anomalyId: string;
  destination: string;
  message: WebhookMessage;
  threadKey?: string | undefined;
}

/** Signs triage links with the stack's key; `prime` starts reading the key before the first link is due. */
export function createLinkSigner(options: {
  secrets?: AwsJsonCall | undefined;
  secretId?: string | undefined;
  key?: string | undefined;
  now: () => number;
}) {
  const readKey = options.secretId && options.secrets ? triageKeyReader(options.secrets, options.secretId) : undefined;
  const key = async (signal?: AbortSignal): Promise<string> => {
    if (options.key !== undefined) return options.key;
    if (!readKey) throw new TriageKeyInvalidError('No triage key is configured.', 'triage_key_missing');
    return readKey(signal);
  };
  return {
    /** Reads the key ahead; settles when it is read, rejects when it could not be. */
    async prime(signal: AbortSignal): Promise<void> {
      await key(signal);
    },
    async link(alert: LinkAlert, signal: AbortSignal): Promise<string> {
      const { payload } = alert.message;
      const name = line(payload.account_name, ACCOUNT_MAX);
      const id = line(payload.account_id, ACCOUNT_MAX);
      const fields: TriageTokenFields = {
        a: alert.anomalyId,
        d: alert.destination,
        t: line(payload.title, TITLE_MAX),
        c: accountLabel(name, id),
        ...(alert.threadKey ? { k: alert.threadKey } : {}),
      };
      return triageLink(alert.origin, await key(signal), fields, options.now());
    },
    /** The link of the picture of the alert's account's daily cost, up to the alert's day. */
    async chartLink(alert: { origin: string; message: WebhookMessage }, signal: AbortSignal): Promise<string> {
      const { payload, metadata } = alert.message;
      const name = line(payload.account_name, ACCOUNT_MAX);
      const fields = {
        a: line(payload.account_id, ACCOUNT_ID_MAX),
        d: alertDay(metadata.timestamp, options.now()),
        ...(name ? { n: name } : {}),
      };
      return chartLink(alert.origin, await key(signal), fields, options.now());
    },
    /** The link of a digest's page, listing each anomaly it names (lib/group measured it within DIGEST_LINK_MAX). */
    async digestLink(digest: { origin: string } & DigestPageFields, signal: AbortSignal) {
      const { origin, ...fields } = digest;
      return `${origin}/triage/${signDigestToken(await key(signal), fields, options.now())}`;
    },
  };
}
export type LinkSigner = ReturnType<typeof createLinkSigner>;
