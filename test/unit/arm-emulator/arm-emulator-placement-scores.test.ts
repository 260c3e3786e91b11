// The ARM emulator's Spot Placement Scores API over HTTPS (there is no SDK for it on npm, so a plain
// https request trusting the emulator's CA): scores from the catalog, the allocation fault rules and the
// low-priority quota, their lag and error model, bounds, authorization, throttling and on-demand errors.
// The emulator runs in this process on loopback (no control plane), so the file lives with the unit tests.
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  startArmEmulator,
  type ArmEmulator,
  type PlacementScore,
  type SpotPlacementScoresResponse,
} from '../../../local/arm-emulator/index.js';

const subscriptionId = '00000000-0000-0000-0000-0000000000b2';
const location = 'westus2';
const locationScope = `/subscriptions/${subscriptionId}/providers/Microsoft.Compute/locations/${location}`;
const scoresPath = `${locationScope}/placementScores/spot/generate?api-version=2025-06-05`;

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

function post(body: unknown, path = scoresPath): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpsRequest(
      new URL(path, emulator.url),
      {
        method: 'POST',
        ca: emulator.caCertPem,
        headers: { authorization: 'Bearer x', 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? (JSON.parse(text) as unknown) : undefined,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

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

  it('needs Microsoft.Compute/locations/placementScores/generate/action at the location scope', async () => {
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
      const refused = await post(request(['Standard_D2s_v5']));
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
      expect((await post(request(['Standard_D2s_v5']))).status).toBe(200);
    } finally {
      emulator.controls.setAuthorization(undefined);
    }
  });

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
    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = httpsRequest(
        new URL('/admin/placement-scores', emulator.url),
        { method: 'PUT', ca: emulator.caCertPem, headers: { 'content-type': 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ lagMs: 1000 }));
    });
    expect(answer).toMatchObject({ status: 200, body: { lagMs: 1000, errorRate: 0, seed: 1 } });
    expect(emulator.controls.placementScoreOptions().lagMs).toBe(1000);
  });
});
