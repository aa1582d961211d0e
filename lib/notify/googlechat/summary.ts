import { jsonBytes } from '../../format/fit.js';
import {
  mostThatFit,
  notShownLine,
  quietLine,
  type SummaryWeek,
  summaryCounts,
  summaryHeading,
  summaryLine,
  summaryParts,
} from '../../format/summary.js';
import { truncate } from '../../format/text.js';
import { escapeCardHtml, escapeGoogleChatText, GOOGLE_CHAT_LIMITS, GOOGLE_CHAT_MAX_BYTES } from './format.js';

type Paragraph = { textParagraph: { text: string } };
type Section = { header?: string; widgets: Paragraph[] };

/** What a Google Chat webhook takes for a summary: notification text and one card, in no anomaly's thread. */
export interface GoogleChatSummary {
  text: string;
  cardsV2?: [{ cardId: 'cost-summary'; card: { header: { title: string; subtitle: string }; sections: Section[] } }];
}

/** One anomaly's line in card text: escaped sender text, then its Triage link (our own URL) where it has one. */
const lineOf = (week: SummaryWeek, index: number): string => {
  const anomaly = week.anomalies[index]!;
  return `• ${escapeCardHtml(summaryLine(anomaly, week))}${anomaly.link ? ` · <a href="${anomaly.link}">Triage</a>` : ''}`;
};

/** Lines joined by `<br>` into paragraphs of at most the formatter's body budget. */
function paragraphs(lines: readonly string[]): Paragraph[] {
  const texts: string[] = [];
  for (const line of lines) {
    const last = texts.at(-1);
    if (last !== undefined && last.length + 4 + line.length <= GOOGLE_CHAT_LIMITS.body) texts[texts.length - 1] = `${last}<br>${line}`;
    else texts.push(line);
  }
  return texts.map((text) => ({ textParagraph: { text } }));
}

function build(week: SummaryWeek, shown: number): GoogleChatSummary {
  const { open, triaged, hidden } = summaryParts(week, shown, (i) => lineOf(week, i));
  const sections: Section[] = [
    ...(open.length > 0 ? [{ header: 'Open', widgets: paragraphs(open) }] : []),
    ...(triaged.length > 0 ? [{ header: 'Triaged', widgets: paragraphs(triaged) }] : []),
    ...(hidden > 0 ? [{ widgets: [{ textParagraph: { text: escapeCardHtml(notShownLine(hidden)) } }] }] : []),
  ];
  // The header renders as plain text.
  const header = {
    title: truncate(`📊 ${summaryHeading(week)}`, GOOGLE_CHAT_LIMITS.title),
    subtitle: truncate(summaryCounts(week), GOOGLE_CHAT_LIMITS.subtitle),
  };
  return {
    text: truncate(escapeGoogleChatText(`📊 ${summaryHeading(week)}: ${summaryCounts(week)}`), GOOGLE_CHAT_LIMITS.text),
    cardsV2: [{ cardId: 'cost-summary', card: { header, sections } }],
  };
}

/** Google Chat shows at most this many widgets in a card. */
const MAX_WIDGETS = 100;

const widgets = (message: GoogleChatSummary) =>
  (message.cardsV2?.[0].card.sections ?? []).reduce((n, section) => n + section.widgets.length, 0);

/**
 * A week as a cardsV2 message: the counts in the header, the open anomalies and then the triaged
 * ones in card sections, as many as fit GOOGLE_CHAT_MAX_BYTES, and a line naming how many more
 * there are. A summary starts its own thread. A quiet week is one line of text.
 */
export function googleChatSummary(_destination: object, week: SummaryWeek): GoogleChatSummary {
  if (week.anomalies.length === 0) return { text: escapeGoogleChatText(quietLine(week)) };
  const fits = (n: number) => {
    const built = build(week, n);
    return jsonBytes(built) <= GOOGLE_CHAT_MAX_BYTES && widgets(built) <= MAX_WIDGETS;
  };
  return build(week, mostThatFit(week.anomalies.length, fits));
}
