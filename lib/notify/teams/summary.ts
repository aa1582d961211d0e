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
import { escapeTeamsText, TEAMS_MAX_BYTES, type TeamsMessage, type TextBlock, teamsCard } from './format.js';

const block = (text: string, extra: Partial<TextBlock> = {}): TextBlock => ({ type: 'TextBlock', text, wrap: true, ...extra });

/** One anomaly's line: escaped sender text, then its Triage link (our own URL, a Markdown link) where it has one. */
const lineOf = (week: SummaryWeek, index: number): TextBlock => {
  const anomaly = week.anomalies[index]!;
  const link = anomaly.link ? ` · [Triage](${anomaly.link})` : '';
  return block(`• ${escapeTeamsText(summaryLine(anomaly, week))}${link}`, { spacing: 'Small' });
};

function build(week: SummaryWeek, shown: number): TeamsMessage {
  const { open, triaged, hidden } = summaryParts(week, shown, (i) => lineOf(week, i));
  return teamsCard([
    block(`📊 ${escapeTeamsText(summaryHeading(week))}`, { weight: 'Bolder', size: 'Medium' }),
    block(escapeTeamsText(summaryCounts(week)), { isSubtle: true }),
    ...(open.length > 0 ? [block('Open', { weight: 'Bolder', spacing: 'Medium' }), ...open] : []),
    ...(triaged.length > 0 ? [block('Triaged', { weight: 'Bolder', spacing: 'Medium' }), ...triaged] : []),
    ...(hidden > 0 ? [block(escapeTeamsText(notShownLine(hidden)), { isSubtle: true, spacing: 'Medium' })] : []),
  ]);
}

/**
 * A week as an Adaptive Card for a Workflows webhook: the counts, then one line per anomaly, the
 * open ones first, as many as fit TEAMS_MAX_BYTES, and a line naming how many more there are.
 * A quiet week is one line.
 */
export function teamsSummary(_destination: object, week: SummaryWeek): TeamsMessage {
  if (week.anomalies.length === 0) return teamsCard([block(escapeTeamsText(quietLine(week)))]);
  return build(
    week,
    mostThatFit(week.anomalies.length, (n) => jsonBytes(build(week, n)) <= TEAMS_MAX_BYTES),
  );
}
