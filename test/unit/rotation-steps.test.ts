import { describe, expect, it } from 'vitest';
import type { CostApiClient } from '../../lib/cost-api/client.js';
import { CostApiError } from '../../lib/cost-api/errors.js';
import { apiKeyRotator } from '../../lib/rotation/api-key-rotator.js';
import { createRotationSteps } from '../../lib/rotation/steps.js';
import { capturedLogger } from '../helpers/fake-delivery-ports.js';
import { memoryMetrics } from '../helpers/memory-metrics.js';
import { memoryRotationStore } from '../helpers/memory-rotation-store.js';

const PASSWORD = 'platform-password-5d1';
const USER_KEY = 'user-key-77';
// A JWT whose payload says exp = 2026-12-01T00:00:00Z (the signature is not checked).
const TOKEN = `h.${Buffer.from(JSON.stringify({ exp: 1_796_083_200 })).toString('base64url')}.s`;

/** The platform in memory: one login, two payer accounts, cost centers for one of them. */
function fakePlatform(options: { refuseLogin?: boolean; down?: boolean; refuseTest?: boolean } = {}) {
  const calls: string[] = [];
  const client: CostApiClient = {
    async generateToken(credentials) {
      calls.push('token');
      if (options.down) throw new CostApiError('token generation failed: HTTP 503', 'platform_unavailable', 'token_generate', 503);
      if (options.refuseLogin || credentials.password !== PASSWORD)
        throw new CostApiError('refused', 'login_failed', 'token_generate', 401);
      return { authorization: TOKEN, apikey: `${USER_KEY}:-1:null`, userKey: USER_KEY };
    },
    async listPayerAccounts(auth) {
      calls.push(`accounts ${auth.apikey}`);
      if (options.refuseTest && auth.apikey !== `${USER_KEY}:-1:null`)
        throw new CostApiError('refused', 'unauthorized', 'payer_accounts', 401);
      return [
        { accountKey: '12345', accountId: '111111111111', accountName: 'Production payer', cloudTypeId: 0 },
        { accountKey: '67890', accountId: '222222222222', accountName: 'Sandbox', cloudTypeId: 0 },
      ];
    },
    async listCostCenters(auth) {
      calls.push(`cost centers ${auth.apikey}`);
      return [{ id: 'cc-9', name: 'Data platform', code: 'DP' }];
    },
  };
  return { client, calls };
}

function setup(
  selection: Record<string, unknown> = { account: 'Production payer' },
  platform = fakePlatform(),
  credentials: unknown = { username: 'ops@example.com', password: PASSWORD },
) {
  const store = memoryRotationStore(selection);
  const log = capturedLogger();
  const rotator = apiKeyRotator({
    client: platform.client,
    credentialsSecretId: 'platform-credentials',
    readSecret: async () => JSON.stringify(credentials),
    now: () => new Date('2026-11-22T12:00:00Z'),
  });
  const metrics = memoryMetrics();
  const step = createRotationSteps({ store, rotator, logger: log.logger, metrics });
  const event = (Step: string, token = 'v1') => ({ Step, SecretId: 'api-key', ClientRequestToken: token });
  return { store, log, step, event, platform, metrics };
}

async function rotateFully(s: ReturnType<typeof setup>, token = 'v1') {
  s.store.startRotation(token);
  const outcomes = [];
  for (const name of ['createSecret', 'setSecret', 'testSecret', 'finishSecret']) outcomes.push(await s.step(s.event(name, token)));
  return outcomes;
}

describe('API-key rotation, step by step', () => {
  it('builds the key by spec 4.4, tests it, and makes it current; the selection is kept', async () => {
    const s = setup({ account: '12345', costCenter: 'Data platform', note: 'kept' });
    expect(await rotateFully(s)).toEqual(['created', 'nothing_to_set', 'tested', 'finished']);
    const current = JSON.parse(s.store.valueOf('AWSCURRENT')!);
    expect(current).toMatchObject({
      account: '12345',
      costCenter: 'Data platform',
      note: 'kept',
      apikey: `${USER_KEY}:12345:cc-9`,
      authorization: TOKEN,
      accountKey: '12345',
      accountName: 'Production payer',
      costCenterId: 'cc-9',
      costCenterName: 'Data platform',
      issuedAt: '2026-11-22T12:00:00Z',
      expiresAt: '2026-12-01T00:00:00Z',
    });
    expect(s.platform.calls).toEqual([
      'token',
      `accounts ${USER_KEY}:-1:null`,
      `cost centers ${USER_KEY}:12345:`,
      `accounts ${USER_KEY}:12345:cc-9`,
    ]);
    expect(s.store.versions.get('v0')?.stages).toEqual(['AWSPREVIOUS']);
    expect(s.store.versions.get('v1')?.stages).toEqual(['AWSCURRENT']);
  });

  it('a repeated createSecret keeps the pending value it already built', async () => {
    const s = setup();
    s.store.startRotation('v1');
    expect(await s.step(s.event('createSecret'))).toBe('created');
    const built = s.store.versions.get('v1')?.value;
    expect(await s.step(s.event('createSecret'))).toBe('pending_exists');
    expect(s.store.versions.get('v1')?.value).toBe(built);
  });

  it('a repeated finishSecret finds the work done, and clears a left-over AWSPENDING', async () => {
    const s = setup();
    await rotateFully(s);
    expect(await s.step(s.event('finishSecret'))).toBe('already_current');
    s.store.versions.get('v1')!.stages.push('AWSPENDING');
    expect(await s.step(s.event('finishSecret'))).toBe('already_current');
    expect(s.store.versions.get('v1')?.stages).toEqual(['AWSCURRENT']);
  });

  it.each([
    ['a refused login', fakePlatform({ refuseLogin: true }), 'createSecret', 'login_failed'],
    ['a platform outage', fakePlatform({ down: true }), 'createSecret', 'platform_unavailable'],
    ['a key the platform refuses when tested', fakePlatform({ refuseTest: true }), 'testSecret', 'unauthorized'],
  ])('%s leaves AWSCURRENT as it was and removes AWSPENDING', async (_name, platform, failingStep, reason) => {
    const s = setup({ account: 'Production payer' }, platform);
    const before = s.store.valueOf('AWSCURRENT');
    s.store.startRotation('v1');
    let failure: unknown;
    for (const name of ['createSecret', 'setSecret', 'testSecret', 'finishSecret']) {
      try {
        await s.step(s.event(name));
      } catch (error) {
        failure = { step: name, error };
        break;
      }
    }
    expect(failure).toMatchObject({ step: failingStep, error: { name: 'RotationError', reason } });
    expect(s.store.valueOf('AWSCURRENT')).toBe(before);
    expect(s.store.valueOf('AWSPENDING')).toBeUndefined();
    expect(s.log.lines.join('\n')).not.toContain(PASSWORD);
    // The next rotation starts afresh and succeeds once the platform is well.
  });

  it.each([
    ['an account the platform does not have', { account: 'Nope' }, 'account_not_found'],
    ['no account at all', { costCenter: 'x' }, 'selection_invalid'],
    ['a cost center that does not exist', { account: 'Sandbox', costCenter: 'Marketing' }, 'cost_center_not_found'],
  ])('refuses %s with a reason, changing nothing', async (_name, selection, reason) => {
    const s = setup(selection);
    s.store.startRotation('v1');
    await expect(s.step(s.event('createSecret'))).rejects.toMatchObject({ reason });
    expect(JSON.parse(s.store.valueOf('AWSCURRENT')!)).toEqual(selection);
  });

  it.each([
    ['not JSON', '{'],
    ['no password', { username: 'ops@example.com' }],
  ])('names a credentials secret that is %s, never its value', async (_name, credentials) => {
    const s = setup({ account: 'Sandbox' }, fakePlatform(), credentials);
    s.store.startRotation('v1');
    await expect(s.step(s.event('createSecret'))).rejects.toMatchObject({ reason: 'credentials_invalid' });
  });

  it('refuses events that are not rotation events, and versions that are not this rotation', async () => {
    const s = setup();
    await expect(s.step({ Step: 'explode', SecretId: 'api-key' })).rejects.toMatchObject({ reason: 'invalid_event' });
    await expect(s.step(s.event('createSecret', 'unknown'))).rejects.toMatchObject({ reason: 'unknown_version' });
    s.store.versions.set('stale', { value: undefined, stages: [] });
    await expect(s.step(s.event('createSecret', 'stale'))).rejects.toMatchObject({ reason: 'not_pending' });
    s.store.rotationEnabled = false;
    s.store.startRotation('v1');
    await expect(s.step(s.event('createSecret'))).rejects.toMatchObject({ reason: 'rotation_not_enabled' });
  });

  it('testSecret before createSecret completed is a named failure', async () => {
    const s = setup();
    s.store.startRotation('v1');
    await expect(s.step(s.event('testSecret'))).rejects.toMatchObject({ reason: 'pending_missing' });
  });

  it('a Secrets Manager failure while writing AWSPENDING fails the step and keeps AWSCURRENT', async () => {
    const s = setup();
    const before = s.store.valueOf('AWSCURRENT');
    s.store.startRotation('v1');
    s.store.failOn.add('putPending');
    await expect(s.step(s.event('createSecret'))).rejects.toMatchObject({ reason: 'secrets_manager_error' });
    expect(s.store.valueOf('AWSCURRENT')).toBe(before);
  });

  it('when even removing AWSPENDING fails, the log says the next rotation may find one in progress', async () => {
    const s = setup({ account: 'Nope' });
    s.store.startRotation('v1');
    s.store.failOn.add('moveStage');
    await expect(s.step(s.event('createSecret'))).rejects.toMatchObject({ reason: 'account_not_found' });
    expect(s.log.lines.join('\n')).toContain('could not remove AWSPENDING');
  });

  it('an unexpected error is named by its type only', async () => {
    const s = setup();
    s.store.startRotation('v1');
    s.store.readStage = async () => {
      throw new TypeError('secret-looking detail');
    };
    await expect(s.step(s.event('createSecret'))).rejects.toMatchObject({
      reason: 'unexpected_error',
      message: 'Unexpected TypeError during rotation.',
    });
    expect(s.log.lines.join('\n')).not.toContain('secret-looking detail');
  });

  it('a pending value whose token has expired is not made current', async () => {
    const s = setup();
    s.store.startRotation('v1');
    await s.step(s.event('createSecret'));
    const pending = JSON.parse(s.store.versions.get('v1')!.value!);
    s.store.versions.get('v1')!.value = JSON.stringify({ ...pending, expiresAt: '2026-11-01T00:00:00Z' });
    await expect(s.step(s.event('testSecret'))).rejects.toMatchObject({ reason: 'token_expired' });
  });

  it('counts each step as succeeded or failed, so a failed rotation is an alarm, not a log line', async () => {
    const ok = setup();
    await rotateFully(ok);
    expect(ok.metrics.count('Rotations', { outcome: 'succeeded' })).toBe(4);
    expect(ok.metrics.count('Rotations', { outcome: 'succeeded', step: 'finishSecret' })).toBe(1);
    const down = setup({ account: 'Production payer' }, fakePlatform({ down: true }));
    down.store.startRotation('v2');
    await expect(down.step(down.event('createSecret', 'v2'))).rejects.toThrow();
    expect(down.metrics.count('Rotations', { outcome: 'failed', step: 'createSecret' })).toBe(1);
    expect(JSON.stringify(down.metrics.points)).not.toContain(PASSWORD);
  });
});
