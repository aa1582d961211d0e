import * as z from 'zod/mini';
import '../validation/messages.js';

/** An API's own origin: https, or plain http to a loopback host for local use; nothing else is linked to. */
export const originSchema = z
  .string()
  .check(z.maxLength(300), z.regex(/^(?:https:\/\/[A-Za-z0-9.-]+|http:\/\/(?:127\.0\.0\.1|localhost|\[::1\]))(?::\d{1,5})?$/));
