import type { WebhookMessage } from '../message/schema.js';
import { escapeAndTruncate, singleLine, truncate } from '../format/text.js';
import { parseTimestamp } from '../format/time.js';

export interface PlainText {
  type: 'plain_text';
  text: string;
  emoji?: boolean;
}
export interface Mrkdwn {
  type: 'mrkdwn';
  text: string;
  /** Always true: Slack must not turn sender URLs, #channel names or @channel-style words into links and mentions. */
  verbatim: true;
}
export type SlackBlock =
  | { type: 'header'; text: PlainText }
  | { type: 'section'; text?: Mrkdwn; fields?: Mrkdwn[] }
  | { type: 'context'; elements: Mrkdwn[] }
  | { type: 'divider' };

export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/**
 * Our own budget, well below Slack's per-field maxima (header 150, section 3,000, field
 * 2,000), because Slack also refuses messages whose total is large (`msg_blocks_too_long`).
 */
export const LIMITS = {
  header: 150,
  body: 2_500,
  field: 250,
  context: 300,
  fallback: 600,
} as const;

// Maps, not object literals: a kind or cloud named `constructor` or `__proto__` is just a string.
const KNOWN_KINDS = new Map<string, { label: string; emoji: string }>([
  ['anomaly_alert', { label: 'Cost anomaly', emoji: ':rotating_light:' }],
]);

export function kindLabel(objectType: string): string {
  const known = KNOWN_KINDS.get(objectType);
  if (known) return known.label;
  const words = singleLine(objectType.replace(/[_-]+/g, ' '));
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function timeText(timestamp: string | undefined): string | undefined {
  if (timestamp === undefined || timestamp.trim() === '') return undefined;
  const epoch = parseTimestamp(timestamp);
  if (epoch === undefined) return escapeAndTruncate(singleLine(timestamp), LIMITS.context - 20);
  const fallback = new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');
  return `<!date^${epoch}^{date_short_pretty} {time}|${fallback}>`;
}

const CLOUDS = new Map([
  ['aws', 'AWS'],
  ['azure', 'Azure'],
  ['gcp', 'GCP'],
  ['oci', 'OCI'],
]);

function cloudLabel(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? (CLOUDS.get(v.toLowerCase()) ?? v) : undefined;
}

function accountText(name: string | undefined, id: string | undefined): string | undefined {
  const n = name?.trim();
  const i = id?.trim();
  if (n && i) return `${n} (${i})`;
  return n || i || undefined;
}

/**
 * Builds the Block Kit message. Everything that came from the sender is escaped so it can
 * never form a mention or link; the only live mention is the one the configuration trusts.
 */
export function formatSlackMessage(message: WebhookMessage, mention?: string): SlackMessage {
  const { metadata, payload } = message;
  const kind = kindLabel(metadata.object_type);
  const emoji = KNOWN_KINDS.get(metadata.object_type)?.emoji ?? ':bell:';
  const title = singleLine(payload.title ?? '') || kind;
  const body = payload.message?.trim() ?? '';
  const prefix = mention ? `${mention} ` : '';

  const blocks: SlackBlock[] = [
    { type: 'header', text: { type: 'plain_text', text: truncate(`${emoji} ${title}`, LIMITS.header), emoji: true } },
  ];
  if (body || mention) {
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: (prefix + escapeAndTruncate(body, LIMITS.body)).trim(), verbatim: true } });
  }

  const facts: Array<[string, string | undefined]> = [
    ['Kind', kind],
    ['Cloud', cloudLabel(payload.cloud_provider_type)],
    ['Account', accountText(payload.account_name, payload.account_id)],
  ];
  const fields = facts
    .filter((fact): fact is [string, string] => Boolean(fact[1]))
    .map(([label, value]) => ({
      type: 'mrkdwn' as const,
      text: `*${label}*\n${escapeAndTruncate(singleLine(value), LIMITS.field)}`,
      verbatim: true as const,
    }));
  blocks.push({ type: 'section', fields });

  const time = timeText(metadata.timestamp);
  blocks.push({
    type: 'context',
    elements: [{ type: 'mrkdwn', text: time ? `:clock3: ${time}` : 'Sent by the cost platform', verbatim: true }],
  });

  const summary = body ? `${title}: ${singleLine(body)}` : title;
  return { text: prefix + escapeAndTruncate(`${kind} – ${summary}`, LIMITS.fallback), blocks };
}
