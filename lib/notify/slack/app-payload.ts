import type { AnomalyPost, EscalationMark, PostOutcome, TriageControls } from '../../chat/service.js';
import type { CostCenterRef } from '../../message/cost-center.js';
import type { WebhookMessage } from '../../message/schema.js';
import type { NodeFetch } from '../../transport/fetch-over-node-http.js';
import type { editedNote, escalatedNote, formatSlackMessage, markText, triageLinkBlock, updateNote } from './format.js';

/**
 * What the app service posts: the validated alert and where it stands (formatting happens in the
 * lazy client), or one Web API call of our own (a triage note, the edit after a click).
 */
export type SlackAppPost = SlackAppPayload | SlackAppCall;

export interface SlackAppCall {
  call: 'chat.postMessage' | 'chat.update';
  body: Record<string, unknown>;
}

export interface SlackAppPayload {
  message: WebhookMessage;
  mention?: string;
  anomaly: AnomalyPost;
  /** The triage buttons, when the app takes clicks; a digest's link to the page of its anomalies. */
  triage?: TriageControls;
  /** The cost centers of the alert's account, where known. */
  costCenters?: readonly CostCenterRef[];
  /** Where the anomaly waited unacknowledged before it came here (lib/escalation). */
  escalation?: EscalationMark;
  /** The picture of the account's cost trend, where one goes with the message. */
  chartUrl?: string;
}

/** What the lazily loaded Web API client uses of the code already on the cold path. */
export interface SlackAppTools {
  transport: NodeFetch;
  formatSlackMessage: typeof formatSlackMessage;
  updateNote: typeof updateNote;
  editedNote: typeof editedNote;
  markText: typeof markText;
  escalatedNote: typeof escalatedNote;
  triageLinkBlock: typeof triageLinkBlock;
  outcomeWithoutAnswer(error: unknown): PostOutcome;
  parseRetryAfterMs(header: string | null): number | undefined;
}
