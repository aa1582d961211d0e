// A week's summary as one Jira issue: our heading as its summary, the counts and a line per
// anomaly as its description. Loaded with the kind's extras (lazy-jira-extras.ts).
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
import { type AdfDoc, type AdfInline, bulletList, doc, jiraText, ours, paragraph, plain } from './adf.js';
import type { JiraDestination } from './config.js';
import { JIRA_DOC_MAX_BYTES, JIRA_LIMITS } from './format.js';
import type { JiraPost } from './payload.js';

/** One anomaly's line as unmarked text, then its Triage link (our own URL, the only link) where it has one. */
function lineOf(week: SummaryWeek, index: number): AdfInline[] {
  const anomaly = week.anomalies[index]!;
  const line = plain(summaryLine(anomaly, week));
  return anomaly.link ? [...line, ours(' · '), ours('Triage', { type: 'link', attrs: { href: anomaly.link } })] : line;
}

function description(week: SummaryWeek, shown: number): AdfDoc {
  const { open, triaged, hidden } = summaryParts(week, shown, (i) => i);
  return doc(
    paragraph(...plain(summaryCounts(week))),
    paragraph(...(open.length > 0 ? [ours('Open', { type: 'strong' })] : [])),
    bulletList(open.map((i) => lineOf(week, i))),
    paragraph(...(triaged.length > 0 ? [ours('Triaged', { type: 'strong' })] : [])),
    bulletList(triaged.map((i) => lineOf(week, i))),
    paragraph(...(hidden > 0 ? [ours(notShownLine(hidden), { type: 'em' })] : [])),
  );
}

/**
 * A week as one issue in the destination's project: the heading as its summary; the counts and
 * the anomalies, the open ones first, as many as fit JIRA_DOC_MAX_BYTES, then how many more there
 * are. A quiet week is an issue of one line, its summary.
 */
export function jiraSummary(destination: JiraDestination, week: SummaryWeek): JiraPost {
  if (week.anomalies.length === 0) {
    const issue = { summary: truncate(jiraText(quietLine(week)), JIRA_LIMITS.summary) };
    return () => ({ issue, destination });
  }
  const shown = mostThatFit(week.anomalies.length, (n) => jsonBytes(description(week, n)) <= JIRA_DOC_MAX_BYTES);
  const issue = { summary: truncate(jiraText(summaryHeading(week)), JIRA_LIMITS.summary), description: description(week, shown) };
  return () => ({ issue, destination });
}
