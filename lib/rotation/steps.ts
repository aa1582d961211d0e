import * as z from 'zod/mini';
import '../validation/messages.js';
import { coldStartTracker, type Logger } from '../log/logger.js';
import { type Metrics, noMetrics, rotationMetric } from '../metrics/metrics.js';
import { errorName, ReasonedError } from '../shared/errors.js';
import { describeIssues } from '../shared/zod-issues.js';
import { RotationError } from './errors.js';
import type { RotationStore } from './store.js';

export const rotationEventSchema = z.object({
  Step: z.enum(['createSecret', 'setSecret', 'testSecret', 'finishSecret']),
  SecretId: z.string().check(z.minLength(1)),
  ClientRequestToken: z.string().check(z.minLength(1)),
  RotationToken: z.optional(z.string()),
});

export type RotationEvent = z.infer<typeof rotationEventSchema>;
export type RotationStep = RotationEvent['Step'];

/** What a kind of secret needs to take part in the protocol. */
export interface SecretRotator {
  /** The new value, built from the current one. */
  create(current: string, log: Logger): Promise<string>;
  /** Proves the pending value works against the real system; throws when it does not. */
  test(pending: string, log: Logger): Promise<void>;
}

export type StepOutcome = 'created' | 'pending_exists' | 'nothing_to_set' | 'tested' | 'finished' | 'already_current';

export interface RotationStepsDependencies {
  store: RotationStore;
  rotator: SecretRotator;
  logger: Logger;
  metrics?: Metrics;
}

/** Our own errors carry a reason and a safe message; anything else is named by its type only. */
function describeFailure(error: unknown): { reason: string; message: string } {
  if (error instanceof ReasonedError) return { reason: error.reason, message: error.message };
  return { reason: 'unexpected_error', message: `Unexpected ${errorName(error)} during rotation.` };
}

/**
 * The four steps of the Secrets Manager rotation protocol. Every step may be retried, so each
 * checks what is already done; a failure never moves AWSCURRENT, so readers keep a working value.
 */
export function createRotationSteps(deps: RotationStepsDependencies): (event: unknown) => Promise<StepOutcome> {
  const { store, rotator } = deps;
  const metrics = deps.metrics ?? noMetrics;
  const coldStart = coldStartTracker();

  /** Set once the token's version is known to be this rotation's AWSPENDING version. */
  interface Progress {
    pendingConfirmed: boolean;
  }

  async function run(event: RotationEvent, log: Logger, progress: Progress): Promise<StepOutcome> {
    const { Step: step, SecretId: secretId, ClientRequestToken: token } = event;
    const versions = await store.describe(secretId);
    if (!versions.rotationEnabled) throw new RotationError('Rotation is not enabled for this secret.', 'rotation_not_enabled');
    const stages = versions.stagesByVersion[token];
    if (!stages) throw new RotationError(`Version ${token} is not a version of this secret.`, 'unknown_version');
    if (stages.includes('AWSCURRENT')) {
      // A retried finishSecret may find AWSCURRENT moved but AWSPENDING not yet removed.
      if (step === 'finishSecret' && stages.includes('AWSPENDING')) {
        await store.moveStage(secretId, 'AWSPENDING', { removeFrom: token });
      }
      return 'already_current';
    }
    if (!stages.includes('AWSPENDING')) {
      throw new RotationError(`Version ${token} is not AWSPENDING; another rotation may have replaced it.`, 'not_pending');
    }
    progress.pendingConfirmed = true;

    switch (step) {
      case 'createSecret': {
        if ((await store.readVersion(secretId, token, 'AWSPENDING')) !== undefined) return 'pending_exists';
        const next = await rotator.create(await store.readStage(secretId, 'AWSCURRENT'), log);
        await store.putPending(secretId, token, next);
        return 'created';
      }
      case 'setSecret':
        return 'nothing_to_set';
      case 'testSecret': {
        const pending = await store.readVersion(secretId, token, 'AWSPENDING');
        if (pending === undefined) {
          throw new RotationError('The AWSPENDING version has no value; createSecret has not completed.', 'pending_missing');
        }
        await rotator.test(pending, log);
        return 'tested';
      }
      case 'finishSecret': {
        const current = Object.entries(versions.stagesByVersion).find(([, s]) => s.includes('AWSCURRENT'))?.[0];
        await store.moveStage(secretId, 'AWSCURRENT', { moveTo: token, ...(current ? { removeFrom: current } : {}) });
        // AWSPENDING left on any version would make the next RotateSecret fail as "in progress".
        await store.moveStage(secretId, 'AWSPENDING', { removeFrom: token });
        return 'finished';
      }
    }
  }

  return async (input) => {
    const parsed = rotationEventSchema.safeParse(input);
    if (!parsed.success) {
      const fields = describeIssues(parsed.error)
        .map((p) => p.path)
        .join(', ');
      deps.logger.error('rotation event is invalid', { reason: 'invalid_event', fields });
      metrics.add(rotationMetric('invalid_event', 'failed'));
      throw new RotationError(`Not a Secrets Manager rotation event (check ${fields}).`, 'invalid_event');
    }
    const event = parsed.data;
    const log = deps.logger.child({
      step: event.Step,
      secretId: event.SecretId,
      versionId: event.ClientRequestToken,
      coldStart: coldStart(),
    });
    const progress: Progress = { pendingConfirmed: false };
    try {
      const outcome = await run(event, log, progress);
      log.info('rotation step done', { outcome });
      metrics.add(rotationMetric(event.Step, 'succeeded'));
      return outcome;
    } catch (error) {
      const failure = describeFailure(error);
      log.error('rotation step failed', { reason: failure.reason, detail: failure.message });
      metrics.add(rotationMetric(event.Step, 'failed'));
      if (progress.pendingConfirmed && (event.Step === 'createSecret' || event.Step === 'testSecret')) {
        await abandon(event, log);
      }
      throw new RotationError(failure.message, failure.reason);
    }
  };

  /**
   * Ends a failed rotation with AWSPENDING on no version. Left in place, it would make every
   * later RotateSecret (the schedule's or an operator's) fail as "already in progress", and
   * retries would keep testing a value that has already failed.
   */
  async function abandon(event: RotationEvent, log: Logger): Promise<void> {
    try {
      await store.moveStage(event.SecretId, 'AWSPENDING', { removeFrom: event.ClientRequestToken });
      log.warn('rotation abandoned: AWSPENDING removed, AWSCURRENT unchanged; the next rotation starts afresh');
    } catch (error) {
      log.error('could not remove AWSPENDING after the failure; the next rotation may report one in progress', {
        reason: describeFailure(error).reason,
      });
    }
  }
}
