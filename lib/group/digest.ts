import { type AnomalyPost, OPENING } from '../chat/service.js';
import { jsonBytes } from '../format/fit.js';
import { truncate } from '../format/text.js';
import type { CostCenterRef } from '../message/cost-center.js';
import type { WebhookMessage } from '../message/schema.js';
import type { DigestPlan } from '../notify/kind.js';
import { type GroupEntry, joinOrder } from './store.js';

/** One message a closing group posts: an alert itself, or one part of a digest. */
export interface DigestPart {
  message: WebhookMessage;
  anomaly?: AnomalyPost;
  /** An alert posted alone: the origin its triage link leads to. A digest names many anomalies and offers no controls. */
  origin?: string;
  /** An alert posted alone: its account's cost centers, where known. */
  costCenters?: CostCenterRef[];
  /** A digest's alert lines, for a chat that builds its digests of its own (DigestPlan.build). */
  digest?: { title: string; lines: string[] };
  /** The alerts it carries (their keys), so that a refused closing parks exactly those not yet posted. */
  keys: string[];
}

/**
 * The payload a service receives for a digest message at its destination (the configured
 * mention included): what the rest of the message takes besides the alert lines is measured on it.
 */
export type DigestFrame = (message: WebhookMessage) => unknown;

/** Bytes of a text inside the JSON a service receives: a lone surrogate is six (`\udxxx`), a quote two. */
const textBytes = (text: string) => jsonBytes(text) - 2;

/** How much of each field a digest line shows: enough to tell alerts apart. */
const LINE_LIMITS = { title: 60, account: 24, message: 40 } as const;

// Only the words the platform's own texts use for severity; anything else keeps its arrival order.
const RANKS: ReadonlyArray<RegExp> = [/\bcritical\b/i, /\b(?:high|severe)\b/i, /\b(?:medium|warning)\b/i];

const rankOf = (message: WebhookMessage): number => {
  const text = `${message.payload.title ?? ''} ${message.payload.message ?? ''}`;
  const rank = RANKS.findIndex((pattern) => pattern.test(text));
  return rank === -1 ? RANKS.length : rank;
};

const cut = (text: string | undefined, max: number): string => truncate((text ?? '').replace(/\s+/g, ' ').trim(), max);

/** One alert as a digest names it: title, account, the start of its message. */
export function digestLine({ message, anomaly }: GroupEntry): string {
  const { payload } = message;
  const title = cut(payload.title || payload.message, LINE_LIMITS.title);
  const account = cut(payload.account_name || payload.account_id, LINE_LIMITS.account);
  const start = payload.title ? cut(payload.message, LINE_LIMITS.message) : '';
  const update = anomaly?.kind === 'follow_up' ? ` (update ${anomaly.updates})` : '';
  return `• ${[title + update, account, start].filter(Boolean).join(' · ')}`;
}

const digestMessage = (objectType: string, now: number, title: string, body: string): WebhookMessage => ({
  metadata: { object_type: objectType, timestamp: new Date(now).toISOString(), destination_url: undefined },
  payload: { title, message: body, cloud_provider_type: undefined, account_id: undefined, account_name: undefined },
});

/**
 * What a closing group posts: the alert itself when it is alone, otherwise digests that name
 * every alert, the most important first, split into as many messages as the service's limits
 * need. No alert is dropped.
 */
export function digestParts(entries: readonly GroupEntry[], fit: DigestPlan, now: number, frame: DigestFrame): DigestPart[] {
  const [only] = entries;
  if (entries.length === 1 && only) {
    const { message, anomaly, origin, key, costCenters } = only;
    return [
      { message, keys: [key], ...(anomaly ? { anomaly } : {}), ...(origin ? { origin } : {}), ...(costCenters ? { costCenters } : {}) },
    ];
  }
  const kinds = new Set(entries.map((e) => e.message.metadata.object_type));
  const objectType = kinds.size === 1 ? [...kinds][0]! : 'alert';
  const titleOf = (i: number, parts: number) => `${entries.length} alerts grouped${parts > 1 ? ` (part ${i + 1} of ${parts})` : ''}`;
  // The rest of a message (title, mention, kind, time) as the service receives it, with the
  // longest title a part can have; a one-character body stands in for the lines.
  const rest =
    fit.maxBytes === undefined ? 0 : jsonBytes(frame(digestMessage(objectType, now, titleOf(entries.length - 1, entries.length), 'x'))) - 1;
  const room = { chars: fit.chars, bytes: (fit.maxBytes ?? Number.POSITIVE_INFINITY) - rest };

  // The same order whichever closer splits them, so that one resuming after posted parts names the rest.
  const ordered = entries
    .map((entry) => ({ entry, rank: rankOf(entry.message) }))
    .sort((a, b) => a.rank - b.rank || joinOrder(a.entry, b.entry));
  const chunks: Array<{ lines: string[]; keys: string[] }> = [];
  let used = { chars: 0, bytes: 0 };
  for (const { entry } of ordered) {
    const line = digestLine(entry);
    const rendered = fit.render(line);
    const size = { chars: rendered.length + 1, bytes: textBytes(rendered) + fit.breakBytes };
    if (chunks.length === 0 || used.chars + size.chars > room.chars || used.bytes + size.bytes > room.bytes) {
      chunks.push({ lines: [], keys: [] });
      used = { chars: 0, bytes: 0 };
    }
    chunks.at(-1)!.lines.push(line);
    chunks.at(-1)!.keys.push(entry.key);
    used = { chars: used.chars + size.chars, bytes: used.bytes + size.bytes };
  }
  return chunks.map(({ lines, keys }, i) => {
    const title = titleOf(i, chunks.length);
    return { digest: { title, lines }, keys, message: digestMessage(objectType, now, title, lines.join('\n')), anomaly: OPENING };
  });
}
