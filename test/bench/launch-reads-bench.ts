// The reads a launch makes before its PUT, at cluster scale: 1,000 launches in one minute (a burst) and
// then a steady 1,000 launches an hour for ten minutes, each reading the vCPU quota usages and the
// placement scores of its NodePool's cheapest sizes through the app's own readers (their caches, TTLs
// and batching) and the real @azure/arm-compute client, against the ARM emulator. Time is virtual (the
// readers' clock advances per launch) so an hour's cadence takes seconds; the emulator's request log
// counts what reached Azure, per minute, beside each API's limit. Compute publishes neither limit: the
// emulator's assumed ones (local/arm-emulator/README.md) stand in, and are printed as such. The
// emulator's token buckets refill in real time, which virtual time outruns, so its 429s are not a figure
// here. Each function instance keeps its own caches: N instances read up to N times as often.
import { startArmEmulator } from '../../local/arm-emulator/index.js';
import { ComputeUsages } from '../../shared/azure/compute-usages.js';
import { PlacementScoresReader } from '../../shared/azure/placement-scores.js';
import { emulatorComputeClient } from '../support/arm-client.js';

const subscriptionId = '00000000-0000-0000-0000-0000000000b2';
const location = 'westus2';
/** The emulator's assumed limits (per minute): ARM's subscription reads for usages, 10 for each kind of score. */
const USAGES_LIMIT_PER_MINUTE = 1_500;
const SCORES_LIMIT_PER_MINUTE = 10;
/** The app's cache TTLs (shared/lifecycle/dependencies.ts). */
const USAGES_TTL_MS = 60_000;
const SCORES_TTL_MS = 45_000;

/** Three NodePools' cheapest candidate sizes, overlapping as a general, a batch and a memory pool do. */
const POOL_SIZES: readonly (readonly string[])[] = [
  ['Standard_D2as_v5', 'Standard_D2s_v5', 'Standard_D4as_v5', 'Standard_D4s_v5', 'Standard_D2ads_v5'],
  ['Standard_D2as_v5', 'Standard_D4as_v5', 'Standard_D8as_v5', 'Standard_F2s_v2', 'Standard_F4s_v2'],
  ['Standard_E2as_v5', 'Standard_E2s_v5', 'Standard_E4as_v5', 'Standard_E4s_v5', 'Standard_D4as_v5'],
];

interface ReadsMeasurement {
  phase: string;
  launches: number;
  minutes: number;
  usagesPeak: number;
  spotPeak: number;
  regularPeak: number;
}

export async function measureLaunchReads(): Promise<ReadsMeasurement[]> {
  const emulator = await startArmEmulator({
    latencies: { createMs: 100, deleteMs: 100, retryAfterSeconds: 1 },
  });
  try {
    // As the app builds its hint client: no retries.
    const compute = emulatorComputeClient(emulator, subscriptionId, { retryOptions: { maxRetries: 0 } });
    let now = 0;
    const clock = () => now;
    const usages = new ComputeUsages(compute, location, USAGES_TTL_MS, clock);
    const scores = new PlacementScoresReader(compute, {
      endpoint: emulator.url,
      subscriptionId,
      location,
      ttlMs: SCORES_TTL_MS,
      now: clock,
    });
    const byMinute = {
      usages: new Map<number, number>(),
      spot: new Map<number, number>(),
      regular: new Map<number, number>(),
    };
    const count = (map: Map<number, number>, n: number) => {
      const minute = Math.floor(now / 60_000);
      if (n > 0) map.set(minute, (map.get(minute) ?? 0) + n);
    };
    const play = async (phase: string, launches: number, spacingMs: number): Promise<ReadsMeasurement> => {
      for (const map of Object.values(byMinute)) map.clear();
      const start = now;
      for (let i = 0; i < launches; i++) {
        const beforeUsages = usages.readCount;
        const beforeScores = scores.requestCount;
        const pool = POOL_SIZES[i % POOL_SIZES.length] ?? [];
        const priority = i % 2 === 0 ? 'spot' : 'regular';
        await usages.read();
        await scores.scores(priority, pool);
        count(byMinute.usages, usages.readCount - beforeUsages);
        count(byMinute[priority], scores.requestCount - beforeScores);
        now += spacingMs;
      }
      return {
        phase,
        launches,
        minutes: (now - start) / 60_000,
        usagesPeak: Math.max(0, ...byMinute.usages.values()),
        spotPeak: Math.max(0, ...byMinute.spot.values()),
        regularPeak: Math.max(0, ...byMinute.regular.values()),
      };
    };
    return [await play('burst: 1,000 in 1 min', 1_000, 60), await play('steady: 1,000/h', 167, 3_600)];
  } finally {
    await emulator.stop();
  }
}

export async function runLaunchReadsBench(): Promise<void> {
  process.stderr.write('[bench] launch reads: quota usages and placement scores before the PUT\n');
  const rows = await measureLaunchReads();
  const header = [
    'phase',
    'launches',
    'usage reads/min (peak)',
    `% of ${USAGES_LIMIT_PER_MINUTE}/min`,
    'spot score requests/min',
    'regular score requests/min',
    `% of ${SCORES_LIMIT_PER_MINUTE}/min (higher)`,
  ];
  const lines = rows.map((r) => [
    r.phase,
    String(r.launches),
    String(r.usagesPeak),
    ((r.usagesPeak / USAGES_LIMIT_PER_MINUTE) * 100).toFixed(1),
    String(r.spotPeak),
    String(r.regularPeak),
    ((Math.max(r.spotPeak, r.regularPeak) / SCORES_LIMIT_PER_MINUTE) * 100).toFixed(0),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  process.stdout.write(
    '\nReads before the PUT, peak per minute (one function instance; three NodePools, spot and regular launches alternate; limits assumed, see the emulator README)\n',
  );
  process.stdout.write(
    [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n') + '\n',
  );
}
