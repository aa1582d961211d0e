import type { FetchFunction } from '@slack/webhook';
import type { PostOutcome } from '../delivery/chat-service.js';
import { createJsonPoster, errorObjectOf, reasonWord, type PostAnswer } from '../http/post-json.js';
import { parseRetryAfterMs } from '../shared/retry-after.js';
import type { TeamsMessage } from './format.js';

/**
 * Reduces a Workflows webhook's answer to an outcome. 202 means only that the flow run was
 * queued: a card the flow cannot post shows in the flow's run history, never here. Errors
 * come as `{"error":{"code":"WorkflowTriggerIsNotEnabled",…}}`; the code becomes the reason.
 */
export function classifyTeamsAnswer({ status, body, retryAfter }: PostAnswer): PostOutcome {
  if (status >= 200 && status < 300) return { kind: 'delivered' };
  const reason = reasonWord(errorObjectOf(body)?.['code']) ?? `http_${status}`;
  if (status === 429) {
    const retryAfterMs = parseRetryAfterMs(retryAfter);
    // Without Retry-After, the core's backoff decides.
    return { kind: 'retryable', reason, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  }
  // 408 is the service's timeout, not a judgement on the card; 5xx may pass.
  if (status >= 500 || status === 408) return { kind: 'retryable', reason };
  // Flow turned off (400 WorkflowTriggerIsNotEnabled), invalid card, revoked or wrong URL:
  // trying again cannot help, an operator must act.
  return { kind: 'refused', reason };
}

export const createTeamsPoster = (transport?: FetchFunction) => createJsonPoster<TeamsMessage>(classifyTeamsAnswer, transport);
