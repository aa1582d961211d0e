import type { CostCenterRef } from '../message/cost-center.js';
import type { WebhookMessage } from '../message/schema.js';
import { withoutControls } from './fit.js';
import { inertText, singleLine } from './text.js';
import { parseTimestamp } from './time.js';

// Maps, not object literals: a kind or cloud named `constructor` or `__proto__` is just a string.
const KNOWN_KINDS = new Map<string, { label: string; emoji: string; slackEmoji: string }>([
  ['anomaly_alert', { label: 'Cost anomaly', emoji: '🚨', slackEmoji: ':rotating_light:' }],
]);
const DEFAULT_EMOJI = { emoji: '🔔', slackEmoji: ':bell:' };

/**
 * The title of an alert whose title and kind are both blank once controls are gone: services
 * that take the title alone as a field (PagerDuty's summary, Jira's) refuse an empty one.
 */
export const UNTITLED = 'Alert from the cost platform';

const CLOUDS = new Map([
  ['aws', 'AWS'],
  ['azure', 'Azure'],
  ['gcp', 'GCP'],
  ['oci', 'OCI'],
]);

export function kindLabel(objectType: string): string {
  const known = KNOWN_KINDS.get(objectType);
  if (known) return known.label;
  const words = singleLine(objectType.replace(/[_-]+/g, ' '));
  return words.charAt(0).toUpperCase() + words.slice(1);
}

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
 * What every chat format shows of an alert: inert text (see inertText), still unescaped: each
 * formatter escapes it for its own syntax and cuts it to its own budget.
 */
export interface AlertView {
  kind: string;
  emoji: string;
  slackEmoji: string;
  /** One line; the kind when the sender gave no title, UNTITLED when neither says anything. */
  title: string;
  body: string;
  /** Kind, cloud, account and the account's cost centers, those known; values are one line. */
  facts: Array<{ label: string; value: string }>;
  /** The alert's time in epoch seconds, when the sender's timestamp could be read. */
  epoch?: number;
  /** The sender's timestamp as one line, when it could not be read. */
  rawTime?: string;
}

export function alertView(message: WebhookMessage, costCenters?: readonly CostCenterRef[]): AlertView {
  const { metadata } = message;
  // Control characters show as nothing (or boxes) in every chat, yet cost bytes: they go first,
  // so every text of the view is free of them, and no markup hides behind one.
  const clean = (value: string | undefined) => (value === undefined ? undefined : inertText(withoutControls(value)));
  const { title, message: body, cloud_provider_type, account_id, account_name } = message.payload;
  const payload = {
    title: clean(title),
    message: clean(body),
    cloud_provider_type: clean(cloud_provider_type),
    account_id: clean(account_id),
    account_name: clean(account_name),
  };
  // Inert after labelling: the label turns the kind's underscores into spaces.
  const kind = inertText(kindLabel(withoutControls(metadata.object_type)));
  const emojis = KNOWN_KINDS.get(metadata.object_type) ?? DEFAULT_EMOJI;
  const facts: Array<[string, string | undefined]> = [
    ['Kind', kind],
    ['Cloud', cloudLabel(payload.cloud_provider_type)],
    ['Account', accountText(payload.account_name, payload.account_id)],
    // Named by the platform's owners, not the sender, yet shown as inertly: a name is still text from elsewhere.
    [costCenters && costCenters.length > 1 ? 'Cost centers' : 'Cost center', clean(costCenters?.map((c) => c.name || c.id).join(', '))],
  ];
  const view: AlertView = {
    kind,
    emoji: emojis.emoji,
    slackEmoji: emojis.slackEmoji,
    title: singleLine(payload.title ?? '') || kind || UNTITLED,
    body: payload.message?.trim() ?? '',
    facts: facts
      .filter((fact): fact is [string, string] => Boolean(fact[1]))
      .map(([label, value]) => ({ label, value: singleLine(value) })),
  };
  const timestamp = metadata.timestamp === undefined ? undefined : withoutControls(metadata.timestamp);
  if (timestamp !== undefined && timestamp.trim() !== '') {
    const epoch = parseTimestamp(timestamp);
    if (epoch === undefined) view.rawTime = singleLine(inertText(timestamp));
    else view.epoch = epoch;
  }
  return view;
}

/** `2026-01-01T00:00:00Z`: the form both Slack's fallback and Adaptive Cards' DATE() take. */
export const isoSeconds = (epoch: number): string => new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');
