// The ARM emulator's placement scores APIs over HTTPS, spot and regular (no SDK for them on npm, so a plain
// https request trusting the emulator's CA): scores from the catalog, the allocation fault rules and the
// quota, their lag and error model, bounds, authorization, throttling and on-demand errors; the regular API
// also ranks each entry, sees only the rules that concern on-demand launches, and can be disabled.
// The emulator runs in this process on loopback (no control plane), so the file lives with the unit tests.
import { emulatorRequest } from '../../support/emulator-request.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  startArmEmulator,
  type ArmEmulator,
  type PlacementScore,
  type RegularPlacementScore,
  type RegularPlacementScoresResponse,
  type SpotPlacementScoresResponse,
} from '../../../local/arm-emulator/index.js';

const subscriptionId = '00000000-0000-0000-0000-0000000000b2';
const location = 'westus2';
const locationScope = `/subscriptions/${subscriptionId}/providers/Microsoft.Compute/locations/${location}`;
const scoresPath = `${locationScope}/placementScores/spot/generate?api-version=2025-06-05`;
const regularPath = `${locationScope}/placementScores/regular/generate?api-version=2026-10-05-preview`;

let emulator: ArmEmulator;

beforeAll(async () => {
  emulator = await startArmEmulator({ latencies: { createMs: 20, deleteMs: 20, retryAfterSeconds: 0.05 } });
});

afterAll(async () => {
  await emulator?.stop();
});

beforeEach(() => {
  // Also refills the buckets: the scores API allows only 10 requests a minute.
  emulator.controls.reset();
});

interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: unknown;
}

/** Sends `body` as JSON; ARM requests carry a token, admin ones none. */
function send(
  method: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return emulatorRequest(emulator, method, path, { body, headers });
}

const post = (body: unknown, path = scoresPath): Promise<Answer> =>
  send('POST', path, body, { authorization: 'Bearer x' });

const request = (
  sizes: string[],
  options: { zones?: boolean; count?: number; locations?: string[] } = {},
) => ({
  desiredLocations: options.locations ?? [location],
  desiredSizes: sizes.map((sku) => ({ sku })),
  desiredCount: options.count ?? 1,
  availabilityZones: options.zones ?? true,
});

async function scores(body: unknown): Promise<PlacementScore[]> {
  const answer = await post(body);
  expect(answer.status).toBe(200);
  return (answer.body as SpotPlacementScoresResponse).placementScores;
}

const byZone = (list: PlacementScore[]): Record<string, string> =>
  Object.fromEntries(list.map((s) => [s.availabilityZone ?? 'regional', s.score]));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('spot placement scores from state', () => {
  it('echoes the request and scores every size, location and zone', async () => {
    const body = request(['Standard_D2s_v5', 'Standard_E4s_v5'], { locations: ['westus2', 'eastus'] });
    const answer = await post(body);
    expect(answer.status).toBe(200);
    const response = answer.body as SpotPlacementScoresResponse;
    expect(response).toMatchObject(body);
    expect(response.placementScores).toHaveLength(2 * 2 * 3);
    expect(response.placementScores[0]).toEqual({
      sku: 'Standard_D2s_v5',
      region: 'westus2',
      availabilityZone: '1',
      score: 'High',
      isQuotaAvailable: true,
    });
    // Standard_E4s_v5 has no restriction; E16 in eastus zone 1 would.
    expect(response.placementScores.every((s) => s.score === 'High')).toBe(true);
    const regional = await scores(request(['Standard_D2s_v5'], { zones: false }));
    expect(regional).toEqual([
      { sku: 'Standard_D2s_v5', region: 'westus2', score: 'High', isQuotaAvailable: true },
    ]);
  });

  it('a ZonalAllocationFailed rule for spot in zone 1: zone 1 Low, zones 2 and 3 High, the region Medium', async () => {
    emulator.controls.injectFault({
      match: { zone: '1', priority: 'Spot' },
      effect: { type: 'ZonalAllocationFailed' },
    });
    expect(byZone(await scores(request(['Standard_D2s_v5'])))).toEqual({ 1: 'Low', 2: 'High', 3: 'High' });
    expect(byZone(await scores(request(['Standard_D2s_v5'], { zones: false })))).toEqual({
      regional: 'Medium',
    });
  });

  it('ignores rules for other priorities, sizes or locations, and rules narrowed to a VM name', async () => {
    emulator.controls.injectFault({ match: { priority: 'Regular' }, effect: { type: 'AllocationFailed' } });
    emulator.controls.injectFault({
      match: { vmSize: 'Standard_E2s_v5' },
      effect: { type: 'AllocationFailed' },
    });
    emulator.controls.injectFault({ match: { location: 'eastus' }, effect: { type: 'AllocationFailed' } });
    emulator.controls.injectFault({ match: { vmName: 'aks-*' }, effect: { type: 'AllocationFailed' } });
    expect(byZone(await scores(request(['Standard_D2s_v5'])))).toEqual({ 1: 'High', 2: 'High', 3: 'High' });
    emulator.controls.injectFault({ match: { vmName: '*' }, effect: { type: 'AllocationFailed' } });
    expect(byZone(await scores(request(['Standard_D2s_v5'])))).toEqual({ 1: 'Low', 2: 'Low', 3: 'Low' });
    expect(byZone(await scores(request(['Standard_D2s_v5'], { zones: false })))).toEqual({ regional: 'Low' });
  });

  it('RestrictedSKU where the catalog restricts the size, DataNotFoundOrStale for an unknown one', async () => {
    expect(byZone(await scores(request(['Standard_D16s_v5'])))).toEqual({
      1: 'High',
      2: 'High',
      3: 'RestrictedSKU',
    });
    const westeurope = await scores(
      request(['Standard_F16s_v2'], { zones: false, locations: ['westeurope'] }),
    );
    expect(westeurope[0]?.score).toBe('RestrictedSKU');
    const unknown = await scores(request(['Standard_Z99s_v9']));
    expect(unknown).toEqual([
      { sku: 'Standard_Z99s_v9', region: 'westus2', score: 'DataNotFoundOrStale', isQuotaAvailable: false },
    ]);
  });

  it('isQuotaAvailable: free low-priority vCPUs cover desiredCount × the size’s vCPUs', async () => {
    emulator.controls.setQuotaLimit({ location, name: 'lowPriorityCores', limit: 8 });
    const list = await scores(request(['Standard_D2s_v5', 'Standard_D4s_v5'], { zones: false, count: 4 }));
    expect(list.map((s) => [s.sku, s.isQuotaAvailable])).toEqual([
      ['Standard_D2s_v5', true],
      ['Standard_D4s_v5', false],
    ]);
    emulator.controls.injectFault({ effect: { type: 'lowPriorityQuota' } });
    expect((await scores(request(['Standard_D2s_v5'], { zones: false })))[0]?.isQuotaAvailable).toBe(false);
  });
});

describe('scores are estimates', () => {
  // The lag is long beside one request, so a loaded machine does not turn "at once" into "after the lag".
  it('with a lag, a fresh fault is not seen at once, and a cleared one is still seen for a while', async () => {
    emulator.controls.setPlacementScoreOptions({ lagMs: 1500 });
    emulator.controls.injectFault({ match: { zone: '2' }, effect: { type: 'ZonalAllocationFailed' } });
    expect(byZone(await scores(request(['Standard_D2s_v5'])))['2']).toBe('High');
    await sleep(1700);
    expect(byZone(await scores(request(['Standard_D2s_v5'])))['2']).toBe('Low');
    emulator.controls.clearFaults();
    expect(byZone(await scores(request(['Standard_D2s_v5'])))['2']).toBe('Low');
    await sleep(1700);
    expect(byZone(await scores(request(['Standard_D2s_v5'])))['2']).toBe('High');
  });

  it('errorRate 1 flips every High and Low; other scores stay', async () => {
    emulator.controls.injectFault({ match: { zone: '1' }, effect: { type: 'ZonalAllocationFailed' } });
    emulator.controls.setPlacementScoreOptions({ errorRate: 1 });
    expect(byZone(await scores(request(['Standard_D2s_v5'])))).toEqual({ 1: 'High', 2: 'Low', 3: 'Low' });
    expect(byZone(await scores(request(['Standard_D16s_v5'])))['3']).toBe('RestrictedSKU');
  });

  it('the flips are deterministic by seed', async () => {
    const sample = async (): Promise<string[]> => {
      const list = await scores(
        request(['Standard_D2s_v5', 'Standard_D4s_v5', 'Standard_E2s_v5'], {
          locations: ['westus2', 'eastus'],
        }),
      );
      return list.map((s) => s.score);
    };
    emulator.controls.setPlacementScoreOptions({ errorRate: 0.5, seed: 42 });
    const first = await sample();
    expect(first).toContain('Low');
    expect(first).toContain('High');
    emulator.controls.setPlacementScoreOptions({ seed: 42 });
    expect(await sample()).toEqual(first);
    expect(() => emulator.controls.setPlacementScoreOptions({ errorRate: 2 })).toThrow(/errorRate/);
  });
});

describe('the request', () => {
  it.each([
    ['desiredSizes', request(['a', 'b', 'c', 'd', 'e', 'f'])],
    ['desiredSizes', { ...request(['Standard_D2s_v5']), desiredSizes: [] }],
    [
      'desiredLocations',
      request(['Standard_D2s_v5'], { locations: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'] }),
    ],
    ['desiredLocations', request(['Standard_D2s_v5'], { locations: [] })],
    ['desiredCount', request(['Standard_D2s_v5'], { count: 0 })],
    ['desiredSizes[0].sku', { ...request([]), desiredSizes: [{ name: 'x' }] }],
    ['availabilityZones', { ...request(['Standard_D2s_v5']), availabilityZones: 'yes' }],
  ])('out of bounds: 400 InvalidParameter naming %s', async (target, body) => {
    const answer = await post(body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: { code: 'InvalidParameter', target } });
  });

  // The regular API's action is assumed from its resource type, the same as the spot API's.
  it.each([
    ['spot', scoresPath],
    ['regular', regularPath],
  ])(
    '%s: needs Microsoft.Compute/locations/placementScores/generate/action at the location scope',
    async (_api, path) => {
      emulator.controls.setAuthorization({
        principalId: 'app',
        assignments: [
          {
            roleName: 'reader',
            actions: ['Microsoft.Compute/*/read'],
            scope: `/subscriptions/${subscriptionId}`,
          },
        ],
      });
      try {
        const refused = await post(request(['Standard_D2s_v5']), path);
        expect(refused.status).toBe(403);
        expect(refused.body).toMatchObject({ error: { code: 'AuthorizationFailed' } });
        expect(JSON.stringify(refused.body)).toContain(
          `perform action 'Microsoft.Compute/locations/placementScores/generate/action' over scope '${locationScope}'`,
        );
        emulator.controls.setAuthorization({
          principalId: 'app',
          assignments: [
            {
              roleName: 'scores',
              actions: ['Microsoft.Compute/locations/placementScores/generate/action'],
              scope: locationScope,
            },
          ],
        });
        expect((await post(request(['Standard_D2s_v5']), path)).status).toBe(200);
      } finally {
        emulator.controls.setAuthorization(undefined);
      }
    },
  );

  it('is throttled at 10 a minute per subscription, and throttle faults can target it', async () => {
    for (let i = 0; i < 10; i++) expect((await post(request(['Standard_D2s_v5']))).status).toBe(200);
    const throttled = await post(request(['Standard_D2s_v5']));
    expect(throttled.status).toBe(429);
    expect(String(throttled.headers['x-ms-ratelimit-remaining-resource'])).toContain(
      'SpotPlacementScores3Min;0',
    );

    emulator.controls.reset();
    emulator.controls.injectFault({
      effect: { type: 'throttle', requestKind: 'spotPlacementScores' },
      times: 1,
    });
    expect((await post(request(['Standard_D2s_v5']))).status).toBe(429);
    expect((await post(request(['Standard_D2s_v5']))).status).toBe(200);
  });

  it('answers an error on demand (request-error fault), then recovers', async () => {
    emulator.controls.injectFault({
      effect: { type: 'requestError', requestKind: 'spotPlacementScores', status: 503 },
      times: 1,
    });
    const failed = await post(request(['Standard_D2s_v5']));
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({ error: { code: 'ServiceUnavailable' } });
    expect((await post(request(['Standard_D2s_v5']))).status).toBe(200);
    const log = emulator.controls.requests({ kind: 'spotPlacementScores' });
    expect(log.map((e) => e.status)).toEqual([503, 200]);
    expect(log[1]?.body).toMatchObject({ desiredCount: 1 });
  });

  it('offers the options over the admin API', async () => {
    const answer = await send('PUT', '/admin/placement-scores', { lagMs: 1000 });
    expect(answer).toMatchObject({ status: 200, body: { lagMs: 1000, errorRate: 0, seed: 1 } });
    expect(emulator.controls.placementScoreOptions().lagMs).toBe(1000);
  });
});

async function regularScores(body: unknown): Promise<RegularPlacementScore[]> {
  const answer = await post(body, regularPath);
  expect(answer.status).toBe(200);
  return (answer.body as RegularPlacementScoresResponse).placementScores;
}

const preferences = (list: RegularPlacementScore[]): Record<string, number> =>
  Object.fromEntries(list.map((s) => [s.availabilityZone ?? 'regional', s.placementPreference]));

describe('regular placement scores', () => {
  it('answer the spot shape, each entry ranked 0-9 by placementPreference', async () => {
    const body = request(['Standard_D2s_v5', 'Standard_D16s_v5']);
    const answer = await post(body, regularPath);
    expect(answer.status).toBe(200);
    const response = answer.body as RegularPlacementScoresResponse;
    expect(response).toMatchObject(body);
    expect(response.placementScores[0]).toEqual({
      sku: 'Standard_D2s_v5',
      region: 'westus2',
      availabilityZone: '1',
      score: 'High',
      isQuotaAvailable: true,
      placementPreference: 9,
    });
    // Standard_D16s_v5 is restricted in westus2 zone 3 whatever the priority.
    expect(response.placementScores.slice(3).map((s) => [s.score, s.placementPreference])).toEqual([
      ['High', 9],
      ['High', 9],
      ['RestrictedSKU', 0],
    ]);
    expect(await regularScores(request(['Standard_Z99s_v9']))).toEqual([
      {
        sku: 'Standard_Z99s_v9',
        region: 'westus2',
        score: 'DataNotFoundOrStale',
        isQuotaAvailable: false,
        placementPreference: 0,
      },
    ]);
    // The spot API's entries carry no preference.
    expect((await scores(request(['Standard_D2s_v5'])))[0]).not.toHaveProperty('placementPreference');
  });

  it('a ZonalAllocationFailed rule for Regular in zone 1: regular zone 1 Low, spot unaffected', async () => {
    emulator.controls.injectFault({
      match: { zone: '1', priority: 'Regular' },
      effect: { type: 'ZonalAllocationFailed' },
    });
    const zonal = await regularScores(request(['Standard_D2s_v5']));
    expect(byZone(zonal)).toEqual({ 1: 'Low', 2: 'High', 3: 'High' });
    expect(preferences(zonal)).toEqual({ 1: 1, 2: 9, 3: 9 });
    const regional = await regularScores(request(['Standard_D2s_v5'], { zones: false }));
    expect(regional.map((s) => [s.score, s.placementPreference])).toEqual([['Medium', 5]]);
    expect(byZone(await scores(request(['Standard_D2s_v5'])))).toEqual({ 1: 'High', 2: 'High', 3: 'High' });
  });

  it('a rule without a priority lowers both; one for Spot or Low only the spot scores', async () => {
    emulator.controls.injectFault({ match: { zone: '3' }, effect: { type: 'ZonalAllocationFailed' } });
    emulator.controls.injectFault({
      match: { zone: '2', priority: 'Spot' },
      effect: { type: 'AllocationFailed' },
    });
    emulator.controls.injectFault({
      match: { zone: '1', priority: 'Low' },
      effect: { type: 'AllocationFailed' },
    });
    expect(byZone(await regularScores(request(['Standard_D2s_v5'])))).toEqual({
      1: 'High',
      2: 'High',
      3: 'Low',
    });
    expect(byZone(await scores(request(['Standard_D2s_v5'])))).toEqual({ 1: 'High', 2: 'Low', 3: 'Low' });
  });

  it('isQuotaAvailable: free vCPUs of the family and the region both cover desiredCount × the size’s vCPUs', async () => {
    const quotaOf = async (count: number): Promise<boolean[]> =>
      (await regularScores(request(['Standard_D2s_v5', 'Standard_E4s_v5'], { zones: false, count }))).map(
        (s) => s.isQuotaAvailable,
      );
    emulator.controls.setQuotaLimit({ location, name: 'standardDSv5Family', limit: 8 });
    expect(await quotaOf(4)).toEqual([true, true]);
    expect(await quotaOf(5)).toEqual([false, true]);
    emulator.controls.setQuotaLimit({ location, name: 'cores', limit: 16 });
    expect(await quotaOf(4)).toEqual([true, true]);
    expect(await quotaOf(5)).toEqual([false, false]);
    // The low-priority quota is the spot API's, not this one's.
    emulator.controls.setQuotaLimit({ location, name: 'lowPriorityCores', limit: 0 });
    expect(await quotaOf(1)).toEqual([true, true]);
    expect((await scores(request(['Standard_D2s_v5'], { zones: false })))[0]?.isQuotaAvailable).toBe(false);
  });

  it('share the lag and error model', async () => {
    emulator.controls.injectFault({ match: { zone: '1' }, effect: { type: 'ZonalAllocationFailed' } });
    emulator.controls.setPlacementScoreOptions({ errorRate: 1 });
    const flipped = await regularScores(request(['Standard_D2s_v5']));
    expect(byZone(flipped)).toEqual({ 1: 'High', 2: 'Low', 3: 'Low' });
    // The preference follows the score the caller sees.
    expect(preferences(flipped)).toEqual({ 1: 9, 2: 1, 3: 1 });
  });

  it('disabled for the subscription: 403 saying so, before the body is checked; reset enables it', async () => {
    emulator.controls.setRegularPlacementScoresEnabled(false);
    expect(emulator.controls.regularPlacementScoresEnabled()).toBe(false);
    for (const body of [request(['Standard_D2s_v5']), { desiredSizes: [] }]) {
      const refused = await post(body, regularPath);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({
        error: {
          code: 'FeatureNotEnabledForSubscription',
          message: expect.stringContaining(`not enabled for subscription '${subscriptionId}'`),
        },
      });
    }
    expect((await post(request(['Standard_D2s_v5']))).status).toBe(200);
    emulator.controls.reset();
    expect((await post(request(['Standard_D2s_v5']), regularPath)).status).toBe(200);
  });

  it('can be disabled and enabled over the admin API', async () => {
    expect(await send('PUT', '/admin/placement-scores/regular', { enabled: false })).toMatchObject({
      status: 204,
    });
    expect(await send('GET', '/admin/placement-scores/regular', undefined)).toMatchObject({
      status: 200,
      body: { enabled: false },
    });
    expect((await post(request(['Standard_D2s_v5']), regularPath)).status).toBe(403);
    expect(await send('PUT', '/admin/placement-scores/regular', { enabled: 'no' })).toMatchObject({
      status: 400,
    });
    await send('PUT', '/admin/placement-scores/regular', { enabled: true });
    expect((await post(request(['Standard_D2s_v5']), regularPath)).status).toBe(200);
  });

  it('bounds the request as the spot API does, naming its own body', async () => {
    const answer = await post(request(['a', 'b', 'c', 'd', 'e', 'f']), regularPath);
    expect(answer).toMatchObject({
      status: 400,
      body: { error: { code: 'InvalidParameter', target: 'desiredSizes' } },
    });
    expect((await post('not an object', regularPath)).body).toMatchObject({
      error: { target: 'computePlacementScoresInput' },
    });
  });

  it('has its own bucket of 10 a minute, log entries and request-error faults', async () => {
    for (let i = 0; i < 10; i++)
      expect((await post(request(['Standard_D2s_v5']), regularPath)).status).toBe(200);
    const throttled = await post(request(['Standard_D2s_v5']), regularPath);
    expect(throttled.status).toBe(429);
    expect(String(throttled.headers['x-ms-ratelimit-remaining-resource'])).toContain(
      'RegularPlacementScores3Min;0',
    );
    expect((await post(request(['Standard_D2s_v5']))).status).toBe(200);

    emulator.controls.reset();
    emulator.controls.injectFault({
      effect: { type: 'requestError', requestKind: 'regularPlacementScores', status: 503 },
      times: 1,
    });
    expect((await post(request(['Standard_D2s_v5']))).status).toBe(200);
    expect((await post(request(['Standard_D2s_v5']), regularPath)).status).toBe(503);
    expect((await post(request(['Standard_D2s_v5'], { count: 3 }), regularPath)).status).toBe(200);
    const log = emulator.controls.requests({ kind: 'regularPlacementScores' });
    expect(log.map((e) => e.status)).toEqual([503, 200]);
    expect(log[1]?.body).toMatchObject({ desiredCount: 3 });
  });
});
