import { type AnomalyPost, OPENING } from '../chat/service.js';
import type { DestinationType } from '../config/destination-type.js';
import type { WebhookMessage } from '../message/schema.js';
import { type GroupEntry, joinOrder } from './store.js';

/** One message a closing group posts: an alert itself, or one part of a digest. */
export interface DigestPart {
  message: WebhookMessage;
  anomaly?: AnomalyPost;
  /** An alert posted alone: the origin its triage link leads to. A digest names many anomalies and offers no controls. */
  origin?: string;
  /** A digest's alert lines, for a service whose digest is built from them (lib/group/slack-digest.ts). */
  digest?: { title: string; lines: string[] };
}

/**
 * The most characters of alert lines one digest message carries, below each service's body
 * limit (lib/*\/format.ts) with room for escaping, so the formatter never has to cut a line off.
 */
export const DIGEST_BODY_CHARS: Readonly<Record<DestinationType | 'slackApp', number>> = {
  // Several sections of SLACK_LIMITS.body each (slack-digest.ts), within the message's total.
  slack: 6_600,
  slackApp: 2_400,
  teams: 5_600,
  googlechat: 5_600,
};

// Characters a formatter may escape: each is counted as five, the longest escape (`&amp;`).
const ESCAPED = /[&<>*_~`\\[\]#|]/g;
const escapedLength = (line: string) => line.length + (line.match(ESCAPED)?.length ?? 0) * 4;

/** How much of each field a digest line shows: enough to tell alerts apart. */
const LINE_LIMITS = { title: 60, account: 24, message: 40 } as const;

// Only the words the platform's own texts use for severity; anything else keeps its arrival order.
const RANKS: ReadonlyArray<RegExp> = [/\bcritical\b/i, /\b(?:high|severe)\b/i, /\b(?:medium|warning)\b/i];

const rankOf = (message: WebhookMessage): number => {
  const text = `${message.payload.title ?? ''} ${message.payload.message ?? ''}`;
  const rank = RANKS.findIndex((pattern) => pattern.test(text));
  return rank === -1 ? RANKS.length : rank;
};

const cut = (text: string | undefined, max: number): string => {
  const flat = (text ?? '').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** One alert as a digest names it: title, account, the start of its message. */
export function digestLine({ message, anomaly }: GroupEntry): string {
  const { payload } = message;
  const title = cut(payload.title || payload.message, LINE_LIMITS.title);
  const account = cut(payload.account_name || payload.account_id, LINE_LIMITS.account);
  const start = payload.title ? cut(payload.message, LINE_LIMITS.message) : '';
  const update = anomaly?.kind === 'follow_up' ? ` (update ${anomaly.updates})` : '';
  return `• ${[title + update, account, start].filter(Boolean).join(' · ')}`;
}

/**
 * What a closing group posts: the alert itself when it is alone, otherwise digests that name
 * every alert, the most important first, split into as many messages as the service's limit
 * needs. No alert is dropped.
 */
export function digestParts(entries: readonly GroupEntry[], service: DestinationType | 'slackApp', now: number): DigestPart[] {
  const [only] = entries;
  if (entries.length === 1 && only) {
    return [{ message: only.message, ...(only.anomaly ? { anomaly: only.anomaly } : {}), ...(only.origin ? { origin: only.origin } : {}) }];
  }
  // The same order whichever closer splits them, so that one resuming after posted parts names the rest.
  const ordered = entries
    .map((entry) => ({ entry, rank: rankOf(entry.message) }))
    .sort((a, b) => a.rank - b.rank || joinOrder(a.entry, b.entry));
  const budget = DIGEST_BODY_CHARS[service];
  const chunks: string[][] = [];
  let size = budget;
  for (const { entry } of ordered) {
    const line = digestLine(entry);
    const length = escapedLength(line) + 1;
    if (size + length > budget || chunks.length === 0) {
      chunks.push([]);
      size = 0;
    }
    chunks.at(-1)!.push(line);
    size += length;
  }
  const kinds = new Set(entries.map((e) => e.message.metadata.object_type));
  const objectType = kinds.size === 1 ? [...kinds][0]! : 'alert';
  const titleOf = (i: number) => `${entries.length} alerts grouped${chunks.length > 1 ? ` (part ${i + 1} of ${chunks.length})` : ''}`;
  return chunks.map((lines, i) => ({
    digest: { title: titleOf(i), lines },
    message: {
      metadata: { object_type: objectType, timestamp: new Date(now).toISOString(), destination_url: undefined },
      payload: {
        title: titleOf(i),
        message: lines.join('\n'),
        cloud_provider_type: undefined,
        account_id: undefined,
        account_name: undefined,
      },
    },
    anomaly: OPENING,
  }));
}
