import type { CallOptions, CostApiClient, Credentials, PlatformAuth } from './client.js';
import { CostApiError } from './errors.js';

/** How long a signed-in session is used before signing in again: well inside any token lifetime seen. */
const SESSION_MS = 60 * 60_000;

/**
 * One sign-in per container, shared by every call that needs the platform (a picture's daily
 * cost, a cost event): its token is kept for a while, and a refusal of it signs in again once.
 * What it hands out is an account-scoped key (`<user_key>:<accountKey>:`) and the token as received.
 */
export interface PlatformSession {
  /** Calls `work` with the payer's account-scoped credentials; signs in first when needed. */
  withAuth<T>(payer: string, work: (auth: PlatformAuth) => Promise<T>, options?: CallOptions): Promise<T>;
}

export function platformSession(options: {
  client: Pick<CostApiClient, 'generateToken'>;
  credentials: (signal?: AbortSignal) => Promise<Credentials>;
  now: () => number;
}): PlatformSession {
  let session: Promise<{ userKey: string; authorization: string; until: number }> | undefined;
  const signIn = (signal?: AbortSignal) => {
    const started = options.now();
    session = (async () => {
      const token = await options.client.generateToken(await options.credentials(signal), signal ? { signal } : {});
      return { userKey: token.userKey, authorization: token.authorization, until: started + SESSION_MS };
    })();
    // A failed sign-in is tried again by the next call rather than remembered.
    session.catch(() => {
      session = undefined;
    });
    return session;
  };
  return {
    async withAuth(payer, work, callOptions) {
      const current = session && (await session.catch(() => undefined));
      const live = current && current.until > options.now() ? current : await signIn(callOptions?.signal);
      const auth = (s: { userKey: string; authorization: string }) => ({
        apikey: `${s.userKey}:${payer}:`,
        authorization: s.authorization,
      });
      try {
        return await work(auth(live));
      } catch (error) {
        if (!(error instanceof CostApiError) || error.reason !== 'unauthorized') throw error;
        // The token was revoked or expired early: one new sign-in, one more try.
        return work(auth(await signIn(callOptions?.signal)));
      }
    },
  };
}
