import { hash } from 'node:crypto';
import type { ChatService } from '../../chat/service.js';
import type { KindSettings } from '../kind.js';
import type { PagerDutyDestination } from './config.js';
import type { PagerDutyPost } from './payload.js';

/**
 * What PagerDuty's limit counts: the integration key. Hashed, so that the key, a secret, is in
 * no pace key that a log line or metric might ever name; no other kind's key is 64 hex digits.
 */
export const pagerDutyPaceKey = (routingKey: string): string => hash('sha256', routingKey);

/**
 * The PagerDuty kind's one service, through the Events API v2. `format` only gathers what the
 * post is about; the event is made and posted by a module imported on the first post, so a
 * configuration without PagerDuty never loads or parses it. The API is one POST: a small poster
 * over our transport (no redirect followed, one deadline per post) rather than @pagerduty/pdjs.
 */
export const pagerDutyServices = ({ posting, env }: KindSettings): { pagerduty: ChatService<PagerDutyPost, PagerDutyDestination> } => ({
  pagerduty: {
    // The anomaly's id is hashed only when the poster reads it.
    format: (message, { severity }, ...rest) => [message, severity, ...rest],
    // The port's posting is handed over, not bundled again (KindSettings.posting).
    post: async (...post) => (await import('./lazy-pagerduty-post.js')).postEvent({ env, posting }, ...post),
    // PagerDuty asks for about 120 events a minute per integration key; the margin absorbs jitter.
    minIntervalMs: 550,
    paceKey: pagerDutyPaceKey,
  },
});
