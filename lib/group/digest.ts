import { type AnomalyPost, OPENING } from '../chat/service.js';
import { DIGEST_LINK_MAX, DIGEST_PAGE_LIMITS, type DigestPageAnomaly, digestLinkLength } from '../format/digest-token.js';
import { jsonBytes } from '../format/fit.js';
import { truncate } from '../format/text.js';
import { anomalyRecordId } from '../message/anomaly.js';
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
  /** A digest at a destination that offers its page: each anomaly it names, once, as the page lists them. */
  anomalies?: DigestPageAnomaly[];
  /** The alerts it carries (their keys), so that a refused closing parks exactly those not yet posted. */
  keys: string[];
}

/**
 * The payload a service receives for a digest message at its destination (the configured
 * mention included, and a link of the longest a digest's may be, where it gets one): what the
 * rest of the message takes besides the alert lines is measured on it.
 */
export type DigestFrame = (message: WebhookMessage, link?: string) => unknown;

/** Where a digest offers the page of its anomalies: the origin its link is on, the destination's name, and its thread (Google Chat). */
export interface DigestPage {
  origin: string;
  destination: string;
  thread?: string | undefined;
}

/** Bytes of a text inside the JSON a service receives: a lone surrogate is six (`\udxxx`), a quote two. */
const textBytes = (text: string) => jsonBytes(text) - 2;

/** How much of each field a digest line shows: enough to tell alerts apart. */
const LINE_LIMITS = { title: 60, account: 24, costCenters: 48, message: 40 } as const;

// Only the words the platform's own texts use for severity; anything else keeps its arrival order.
const RANKS: ReadonlyArray<RegExp> = [/\bcritical\b/i, /\b(?:high|severe)\b/i, /\b(?:medium|warning)\b/i];

const rankOf = (message: WebhookMessage): number => {
  const text = `${message.payload.title ?? ''} ${message.payload.message ?? ''}`;
  const rank = RANKS.findIndex((pattern) => pattern.test(text));
  return rank === -1 ? RANKS.length : rank;
};

const cut = (text: string | undefined, max: number): string => truncate((text ?? '').replace(/\s+/g, ' ').trim(), max);

/** An account's cost centers as a digest line names them, where the owner directory knew them. */
function costCentersOf(costCenters: readonly CostCenterRef[] | undefined): string {
  const names = (costCenters ?? []).map(({ id, name }) => name.trim() || id).filter(Boolean);
  if (names.length === 0) return '';
  return cut(`${names.length > 1 ? 'cost centers' : 'cost center'} ${names.join(', ')}`, LINE_LIMITS.costCenters);
}

/** One alert as a digest names it: title, account, its cost centers, the start of its message. */
export function digestLine({ message, anomaly, costCenters }: GroupEntry): string {
  const { payload } = message;
  const title = cut(payload.title || payload.message, LINE_LIMITS.title);
  const account = cut(payload.account_name || payload.account_id, LINE_LIMITS.account);
  const start = payload.title ? cut(payload.message, LINE_LIMITS.message) : '';
  const update = anomaly?.kind === 'follow_up' ? ` (update ${anomaly.updates})` : '';
  return `• ${[title + update, account, costCentersOf(costCenters), start].filter(Boolean).join(' · ')}`;
}

/** An account as the page names it: `name (id)`, or whichever of the two is known. */
const accountOf = ({ payload }: WebhookMessage): string => {
  const name = cut(payload.account_name, DIGEST_PAGE_LIMITS.account);
  const id = cut(payload.account_id, DIGEST_PAGE_LIMITS.account);
  return cut(name && id ? `${name} (${id})` : name || id, DIGEST_PAGE_LIMITS.account);
};

/** One anomaly as a digest's page lists it. */
export const pageAnomaly = (entry: GroupEntry, destination: string): DigestPageAnomaly => ({
  anomalyId: anomalyRecordId(entry.message, destination),
  title: cut(entry.message.payload.title || entry.message.payload.message, DIGEST_PAGE_LIMITS.title),
  account: accountOf(entry.message),
});

const digestMessage = (objectType: string, now: number, title: string, body: string): WebhookMessage => ({
  metadata: { object_type: objectType, timestamp: new Date(now).toISOString(), destination_url: undefined },
  payload: { title, message: body, cloud_provider_type: undefined, account_id: undefined, account_name: undefined },
});

/**
 * What a closing group posts: the alert itself when it is alone, otherwise digests that name
 * every alert, the most important first, split into as many messages as the service's limits
 * need. No alert is dropped. With `page`, each digest also lists its anomalies for the link to
 * their page, and is split where that link would grow past DIGEST_LINK_MAX: measured without the
 * key, so a closing that resumes splits as the first one did.
 */
export function digestParts(
  entries: readonly GroupEntry[],
  fit: DigestPlan,
  now: number,
  frame: DigestFrame,
  page?: DigestPage,
): DigestPart[] {
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
  const longestLink = page ? `${page.origin}/${'x'.repeat(Math.max(0, DIGEST_LINK_MAX - page.origin.length - 1))}` : undefined;
  const rest =
    fit.maxBytes === undefined
      ? 0
      : jsonBytes(frame(digestMessage(objectType, now, titleOf(entries.length - 1, entries.length), 'x'), longestLink)) - 1;
  const room = { chars: fit.chars, bytes: (fit.maxBytes ?? Number.POSITIVE_INFINITY) - rest };

  // The same order whichever closer splits them, so that one resuming after posted parts names the rest.
  const ordered = entries
    .map((entry) => ({ entry, rank: rankOf(entry.message) }))
    .sort((a, b) => a.rank - b.rank || joinOrder(a.entry, b.entry));
  const chunks: Array<{ lines: string[]; keys: string[]; anomalies: DigestPageAnomaly[] }> = [];
  let used = { chars: 0, bytes: 0 };
  // The page's link grows with each anomaly; one named twice (an opening and its follow-up) is listed once.
  const listed = (chunk: (typeof chunks)[number], anomaly: DigestPageAnomaly) =>
    chunk.anomalies.some((a) => a.anomalyId === anomaly.anomalyId);
  const linkTakes = (chunk: (typeof chunks)[number] | undefined, anomaly: DigestPageAnomaly | undefined): boolean =>
    !chunk ||
    !anomaly ||
    !page ||
    listed(chunk, anomaly) ||
    digestLinkLength(page.origin, { destination: page.destination, thread: page.thread, anomalies: [...chunk.anomalies, anomaly] }) <=
      DIGEST_LINK_MAX;
  for (const { entry } of ordered) {
    const line = digestLine(entry);
    const rendered = fit.render(line);
    const size = { chars: rendered.length + 1, bytes: textBytes(rendered) + fit.breakBytes };
    const anomaly = page ? pageAnomaly(entry, page.destination) : undefined;
    if (
      chunks.length === 0 ||
      used.chars + size.chars > room.chars ||
      used.bytes + size.bytes > room.bytes ||
      !linkTakes(chunks.at(-1), anomaly)
    ) {
      chunks.push({ lines: [], keys: [], anomalies: [] });
      used = { chars: 0, bytes: 0 };
    }
    const chunk = chunks.at(-1)!;
    chunk.lines.push(line);
    chunk.keys.push(entry.key);
    if (anomaly && !listed(chunk, anomaly)) chunk.anomalies.push(anomaly);
    used = { chars: used.chars + size.chars, bytes: used.bytes + size.bytes };
  }
  return chunks.map(({ lines, keys, anomalies }, i) => {
    const title = titleOf(i, chunks.length);
    return {
      digest: { title, lines },
      keys,
      message: digestMessage(objectType, now, title, lines.join('\n')),
      anomaly: OPENING,
      ...(page ? { anomalies } : {}),
    };
  });
}
