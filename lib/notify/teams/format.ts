import type { EscalationMark, TriageMark } from '../../chat/service.js';
import { type AlertView, alertView, isoSeconds } from '../../format/alert.js';
import { escalationLine } from '../../format/escalation.js';
import { fitWithin, withoutControls } from '../../format/fit.js';
import { singleLine, truncate } from '../../format/text.js';
import { triageLine, triageName } from '../../format/triage.js';
import type { CostCenterRef } from '../../message/cost-center.js';
import type { WebhookMessage } from '../../message/schema.js';
import type { TeamsMention } from './config.js';

export interface TextBlock {
  type: 'TextBlock';
  text: string;
  /** Always true: without it Teams clips long text to one line. */
  wrap: true;
  weight?: 'Bolder';
  size?: 'Small' | 'Medium' | 'Large';
  isSubtle?: boolean;
  spacing?: 'Small' | 'Medium';
}
export interface FactSet {
  type: 'FactSet';
  facts: Array<{ title: string; value: string }>;
}
export interface CardImage {
  type: 'Image';
  url: string;
  altText: string;
  size: 'Stretch';
}
export interface MentionEntity {
  type: 'mention';
  text: string;
  mentioned: { id: string; name: string };
}
export interface AdaptiveCard {
  $schema: 'http://adaptivecards.io/schemas/adaptive-card.json';
  type: 'AdaptiveCard';
  version: '1.4';
  body: Array<TextBlock | FactSet | CardImage>;
  /** A link button; a workflow's card can open a URL but not call back (no Action.Submit). */
  actions?: [{ type: 'Action.OpenUrl'; title: string; url: string }];
  msteams: { width: 'Full'; entities?: MentionEntity[] };
}
/** What a Workflows webhook takes: a message with one Adaptive Card attachment. */
export interface TeamsMessage {
  type: 'message';
  attachments: [{ contentType: 'application/vnd.microsoft.card.adaptive'; contentUrl: null; content: AdaptiveCard }];
}

/**
 * Teams measures its 28 KB limit on its own representation, which is larger than the body
 * (a 24.4 KB body failed): 20,000 bytes leaves the margin.
 */
export const TEAMS_MAX_BYTES = 20_000;
export const TEAMS_LIMITS = { title: 200, body: 6_000, fact: 250, time: 100 } as const;

// Look-alikes rather than backslash escapes, which Teams clients (mobile especially) render
// differently: the text reads the same, and no link, emphasis or <at> mention can form.
const LOOK_ALIKES = new Map([
  ['*', '＊'],
  ['_', '＿'],
  ['[', '［'],
  [']', '］'],
  ['<', '＜'],
  ['>', '＞'],
]);

/** Sender text made inert for the Markdown subset of Adaptive Card text in Teams. */
export function escapeTeamsText(text: string): string {
  return (
    withoutControls(text)
      .replace(/[*_[\]<>]/g, (c) => LOOK_ALIKES.get(c) ?? c)
      // A no-break space after a list marker keeps the line a line, not a list item.
      .replace(/^([ \t]*(?:[-+]|\d+[.)]))[ \t]/gm, '$1\u00A0')
      // `{{DATE(…)}}` and the like are card functions; text from the sender must not call them.
      .replace(/\{(?=\{)/g, '{\u200B')
  );
}

const escapeTeamsAndTruncate = (text: string, max: number) => truncate(escapeTeamsText(text), max);

function timeText(view: AlertView): string | undefined {
  if (view.epoch !== undefined) {
    // Teams shows these in the reader's own time zone and language.
    const iso = isoSeconds(view.epoch);
    return `{{DATE(${iso}, SHORT)}} {{TIME(${iso})}}`;
  }
  return view.rawTime !== undefined ? escapeTeamsAndTruncate(view.rawTime, TEAMS_LIMITS.time) : undefined;
}

/** What a follow-up says above the alert: Teams can neither edit nor thread a workflow's post. */
export interface TeamsUpdate {
  firstSeenAt: string;
  updates: number;
  /** What someone decided about the anomaly: the update says so. */
  triage?: TriageMark | undefined;
}

function updateLine({ firstSeenAt, updates, triage }: TeamsUpdate): string {
  const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(firstSeenAt) ? firstSeenAt : undefined;
  const when = iso ? `{{DATE(${iso}, SHORT)}} {{TIME(${iso})}}` : 'earlier';
  const mark = triage ? ` · ${escapeTeamsText(triageLine(triage.state, triageName(triage.by), triage.at))}` : '';
  return `🔁 Update ${updates} of an anomaly first seen ${when}${mark}`;
}

function card(
  view: AlertView,
  mention: TeamsMention | undefined,
  bodyLimit: number,
  update: TeamsUpdate | undefined,
  link: string | undefined,
  escalation: EscalationMark | undefined,
  chartUrl: string | undefined,
): TeamsMessage {
  const body: AdaptiveCard['body'] = [
    ...(escalation
      ? [
          {
            type: 'TextBlock' as const,
            text: `🚨 ${escapeTeamsText(escalationLine(escalation))}`,
            weight: 'Bolder' as const,
            wrap: true as const,
          },
        ]
      : []),
    ...(update
      ? [{ type: 'TextBlock' as const, text: updateLine(update), isSubtle: true as const, size: 'Small' as const, wrap: true as const }]
      : []),
    {
      type: 'TextBlock',
      text: escapeTeamsAndTruncate(`${view.emoji} ${view.title}`, TEAMS_LIMITS.title),
      weight: 'Bolder',
      size: 'Medium',
      wrap: true,
    },
  ];
  const entities: MentionEntity[] = [];
  if (mention) {
    // The configuration's mention is the only one: its <at> text matches its entity exactly.
    const at = `<at>${mention.name}</at>`;
    body.push({ type: 'TextBlock', text: at, wrap: true, spacing: 'Small' });
    entities.push({ type: 'mention', text: at, mentioned: { id: mention.id, name: mention.name } });
  }
  if (view.body && bodyLimit > 0) body.push({ type: 'TextBlock', text: escapeTeamsAndTruncate(view.body, bodyLimit), wrap: true });
  body.push({
    type: 'FactSet',
    facts: view.facts.map(({ label, value }) => ({ title: label, value: escapeTeamsAndTruncate(singleLine(value), TEAMS_LIMITS.fact) })),
  });
  const time = timeText(view);
  body.push({ type: 'TextBlock', text: time ? `🕒 ${time}` : 'Sent by the cost platform', isSubtle: true, size: 'Small', wrap: true });
  if (chartUrl) body.push({ type: 'Image', url: chartUrl, altText: "The account's daily cost over 30 days", size: 'Stretch' });

  return teamsCard(body, { ...(link ? { link } : {}), entities });
}

/** The one Adaptive Card envelope of every Teams message: an alert, a triage note, a summary. */
export function teamsCard(body: AdaptiveCard['body'], extra: { link?: string; entities?: MentionEntity[] } = {}): TeamsMessage {
  const { link, entities = [] } = extra;
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          // 1.4, not 1.5: newer cards posted through a workflow show as an error placeholder.
          version: '1.4',
          body,
          ...(link ? { actions: [{ type: 'Action.OpenUrl' as const, title: 'Triage', url: link }] as const } : {}),
          msteams: { width: 'Full', ...(entities.length > 0 ? { entities } : {}) },
        },
      },
    ],
  };
}

/** An Adaptive Card message for a Workflows webhook, within TEAMS_MAX_BYTES; long text is cut with an ellipsis. */
export function formatTeamsMessage(
  message: WebhookMessage,
  mention?: TeamsMention,
  update?: TeamsUpdate,
  link?: string,
  costCenters?: readonly CostCenterRef[],
  /** Where the anomaly waited unacknowledged before it came here (lib/escalation). */
  escalation?: EscalationMark,
  /** The picture of the account's cost trend (docs/platform.md). */
  chartUrl?: string,
): TeamsMessage {
  const view = alertView(message, costCenters);
  return fitWithin(TEAMS_MAX_BYTES, TEAMS_LIMITS.body, (bodyLimit) => card(view, mention, bodyLimit, update, link, escalation, chartUrl));
}

/** An alert as the service's `format` gathers it: made into its card only by the poster (service.ts). */
export type TeamsAlert = Parameters<typeof formatTeamsMessage>;

/** What the Teams service posts: an alert still to be made into its card, or a message made already (a triage note, a summary). */
export type TeamsPost = TeamsAlert | TeamsMessage;
