// The app's placement-score and usage readers against the ARM emulator through the real compute client's
// pipeline: scores cached per size for their TTL and asked five sizes a request; a server error scores
// nothing until the TTL passes; a refusal (the regular API not enabled for the subscription) stops that
// kind of score for an hour without touching the other; the usages read once per TTL, again at once
// after invalidate, and a failed read leaves the last good one in force only while it is recent.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import { createComputeClient } from '../../shared/azure/compute-client.js';
import { ComputeUsages } from '../../shared/azure/compute-usages.js';
import { PlacementScoresReader, scoreKey } from '../../shared/azure/placement-scores.js';

const subscriptionId = '00000000-0000-0000-0000-0000000000c3';
const location = 'westus2';
let emulator: ArmEmulator;
let client: ReturnType<typeof createComputeClient>;

beforeAll(async () => {
  emulator = await startArmEmulator({ latencies: { createMs: 100, deleteMs: 100, retryAfterSeconds: 0 } });
  client = createComputeClient({
    credential: {
      getToken: () => Promise.resolve({ token: 't', expiresOnTimestamp: Date.now() + 3_600_000 }),
    },
    subscriptionId,
    endpoint: emulator.url,
    caCertPem: emulator.caCertPem,
    maxRetries: 0,
  });
});
afterAll(async () => {
  await emulator?.stop();
});
beforeEach(() => {
  emulator.controls.reset();
});

function reader(now: () => number) {
  const errors: string[] = [];
  const scores = new PlacementScoresReader(client, {
    endpoint: emulator.url,
    subscriptionId,
    location,
    ttlMs: 45_000,
    now,
    onError: (_error, priority) => void errors.push(priority),
  });
  return { scores, errors };
}

const sizes = [
  'Standard_D2s_v5',
  'Standard_D4s_v5',
  'Standard_D2as_v5',
  'Standard_D4as_v5',
  'Standard_D8as_v5',
];

describe('placement scores', () => {
  test('one request per five sizes, cached for the TTL; the fault the emulator will answer scores Low', async () => {
    emulator.controls.injectFault({
      match: { vmSize: 'Standard_D2s_v5', zone: '1', priority: 'Spot' },
      effect: { type: 'ZonalAllocationFailed' },
    });
    let now = 0;
    const { scores } = reader(() => now);
    const first = await scores.scores('spot', [...sizes, 'Standard_E2s_v5']);
    expect(scores.requestCount).toBe(2);
    expect(first.get(scoreKey('spot', 'Standard_D2s_v5', '1'))).toBe('Low');
    expect(first.get(scoreKey('spot', 'Standard_D2s_v5', '2'))).toBe('High');
    now = 44_000;
    await scores.scores('spot', sizes);
    expect(scores.requestCount).toBe(2);
    now = 45_000;
    await scores.scores('spot', sizes.slice(0, 2));
    expect(scores.requestCount).toBe(3);
  });

  test('concurrent launches share one request', async () => {
    const { scores } = reader(() => 0);
    await Promise.all([
      scores.scores('spot', sizes),
      scores.scores('spot', sizes),
      scores.scores('spot', sizes),
    ]);
    expect(scores.requestCount).toBe(1);
  });

  test('a server error scores nothing until the TTL passes; a refusal pauses only its own kind', async () => {
    let now = 0;
    const { scores, errors } = reader(() => now);
    emulator.controls.injectFault({
      effect: { type: 'requestError', requestKind: 'spotPlacementScores', status: 500 },
    });
    expect((await scores.scores('spot', sizes)).size).toBe(0);
    expect((await scores.scores('spot', sizes)).size).toBe(0);
    expect(scores.requestCount).toBe(1);
    emulator.controls.clearFaults();
    now = 45_000;
    expect((await scores.scores('spot', sizes)).size).toBeGreaterThan(0);

    emulator.controls.setRegularPlacementScoresEnabled(false);
    expect((await scores.scores('regular', sizes)).size).toBe(0);
    emulator.controls.setRegularPlacementScoresEnabled(true);
    now = 45_000 + 59 * 60_000;
    expect((await scores.scores('regular', sizes)).size).toBe(0);
    const requests = scores.requestCount;
    now = 45_000 + 61 * 60_000;
    expect((await scores.scores('regular', sizes)).size).toBeGreaterThan(0);
    expect(scores.requestCount).toBe(requests + 1);
    expect(errors).toEqual(['spot', 'regular']);
  });
});

describe('quota usages', () => {
  test('read once per TTL, at once after invalidate; a failed read keeps a recent good one only', async () => {
    let now = 0;
    const usages = new ComputeUsages(client, location, 60_000, () => now);
    emulator.controls.setQuotaLimit({ name: 'standardDSv5Family', limit: 12 });
    const family = (read: Awaited<ReturnType<ComputeUsages['read']>>) =>
      read?.usages.find((u) => u.name === 'standardDSv5Family');
    expect(family(await usages.read())?.limit).toBe(12);
    expect(usages.readCount).toBe(1);
    now = 59_000;
    await usages.read();
    expect(usages.readCount).toBe(1);
    usages.invalidate();
    emulator.controls.setQuotaLimit({ name: 'standardDSv5Family', limit: 8 });
    expect(family(await usages.read())?.limit).toBe(8);
    expect(usages.readCount).toBe(2);

    emulator.controls.injectFault({
      effect: { type: 'requestError', requestKind: 'listUsages', status: 403 },
    });
    now = 120_000;
    expect(family(await usages.read())?.limit).toBe(8);
    now = 59_000 + 5 * 60_000;
    expect(await usages.read()).toBeUndefined();
  });
});
