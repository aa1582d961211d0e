import { alertView } from '../format/alert.js';
import { withoutControls } from '../format/fit.js';
import { inertText, singleLine, truncate } from '../format/text.js';
import type { SummaryFields, SummaryNote } from './summary-record.js';

/** As long as a Triage link carries them (lib/triage-link/lazy-links.ts). */
const TITLE_MAX = 150;
const ACCOUNT_MAX = 100;

const line = (text: string | undefined, max: number) => truncate(singleLine(inertText(withoutControls(text ?? ''))), max);

/** The title as the destination's messages show it (the kind's name when the sender gave none), and the account: inert, one line each. */
export function summaryFields(note: SummaryNote): SummaryFields {
  const { account_id, account_name } = note.message.payload;
  return {
    destination: note.destination,
    title: truncate(alertView(note.message).title, TITLE_MAX),
    accountId: line(account_id, ACCOUNT_MAX),
    accountName: line(account_name, ACCOUNT_MAX),
    ...(note.origin ? { origin: note.origin } : {}),
    ...(note.thread ? { thread: note.thread } : {}),
  };
}
