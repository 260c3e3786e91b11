// Drift replacement makespan, measured: for N drifted nodes of a static NodePool and a budget of B, the
// time from the AKSNodeClass change (imageFamily Ubuntu2204 → AzureLinux) until every old NodeClaim is
// gone and N replacements are Initialized. B = 1 is the serialized baseline (one replacement at a time,
// the failure docs/design.md calls "Blocking creation serializes drift"). Everything runs for real: the control plane (with
// kube-controller-manager), Azurite, the ARM emulator through the real SDK with VM creation scaled down,
// the Function App's orchestrations in the in-process host, the kubelet simulator; the sweep runs in a
// loop as the timer would, every SWEEP_INTERVAL_MS.
import { startBridge } from '../../bridge/index.js';
import { startArmEmulator } from '../../local/arm-emulator/index.js';
import { startAzurite } from '../../local/azurite/launcher.js';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import { startKubeletSimulator } from '../../local/kubelet-simulator/index.js';
import { localAppSettings } from '../../local/stack/app-settings.js';
import { startFunctionApp, type RunningFunctionApp } from '../../local/stack/function-app.js';
import { listNodes } from '../../shared/kube/nodes.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { isDisrupting, isNodeNotReady } from '../../shared/decisions/disruption-state.js';
import type { Node } from '../../shared/models/kube.js';
import { crdDirectory, initialized, nodeClassOf, nodePoolOf, sleep, sweepUntil } from './static-pool.js';

/** Scaled latencies: a ~100 s VM creation becomes 4 s (1:25), boot and Ready likewise. */
const CREATE_MS = 4_000;
const DELETE_MS = 400;
const BOOT_MS = 1_000;
const READY_MS = 400;
const SWEEP_INTERVAL_MS = 250;

const defaultCases: readonly { nodes: number; budget: number }[] = [
  // One replacement cycle: the unit of the ratio column.
  { nodes: 1, budget: 1 },
  { nodes: 5, budget: 1 },
  { nodes: 5, budget: 5 },
  { nodes: 10, budget: 1 },
  { nodes: 10, budget: 5 },
  { nodes: 10, budget: 10 },
  { nodes: 20, budget: 1 },
  { nodes: 20, budget: 5 },
  { nodes: 20, budget: 10 },
];

/** DRIFT_BENCH_CASES="10x1,10x5" runs only those N×B cases. */
function casesFromEnv(): readonly { nodes: number; budget: number }[] {
  const raw = process.env.DRIFT_BENCH_CASES?.trim();
  if (!raw) return defaultCases;
  return raw.split(',').map((item) => {
    const [n, b] = item.split('x').map(Number);
    if (!n || !b) throw new Error(`DRIFT_BENCH_CASES: ${JSON.stringify(item)} is not NxB`);
    return { nodes: n, budget: b };
  });
}

interface DriftMeasurement {
  nodes: number;
  budget: number;
  makespanS: number;
  peakDisrupting: number;
  startsPerSweep: number[];
  /**
   * Budget slots left unused while drifted nodes waited, integrated over time (slot-seconds): 0 when every
   * freed slot is taken at once. What the freed-slot event is there to remove.
   */
  idleSlotS: number;
  /** Mean time from a replacement's Node turning Ready to its NodeClaim's Initialized=True. */
  readyToInitializedS: number;
}

/** What the bench sees of the replacements while a measurement runs, polled every ~100 ms. */
class ReplacementPhases {
  private idleSlotMs = 0;
  private lastPollAt: number | undefined;
  private readonly readyAt = new Map<string, number>();
  private readonly initializedAt = new Map<string, number>();

  constructor(private readonly budget: number) {}

  /** `waiting`: drifted nodes not yet disrupting; `disrupting`: those the budget counts now. */
  observe(
    now: number,
    waiting: number,
    disrupting: number,
    fresh: readonly NodeClaim[],
    nodes: readonly Node[],
  ) {
    if (this.lastPollAt !== undefined) {
      const idle = Math.min(Math.max(0, this.budget - disrupting), waiting);
      this.idleSlotMs += idle * (now - this.lastPollAt);
    }
    this.lastPollAt = now;
    for (const claim of fresh) {
      const name = claim.metadata.name;
      const id = claim.status?.providerID?.toLowerCase();
      const node = id ? nodes.find((n) => n.spec.providerID?.toLowerCase() === id) : undefined;
      if (node && !isNodeNotReady(node) && !this.readyAt.has(name)) this.readyAt.set(name, now);
      if (initialized(claim) && !this.initializedAt.has(name)) this.initializedAt.set(name, now);
    }
  }

  summary(): Pick<DriftMeasurement, 'idleSlotS' | 'readyToInitializedS'> {
    const waits = [...this.initializedAt].flatMap(([name, at]) => {
      const ready = this.readyAt.get(name);
      return ready === undefined ? [] : [Math.max(0, at - ready)];
    });
    const mean = waits.length ? waits.reduce((a, b) => a + b, 0) / waits.length : 0;
    return { idleSlotS: this.idleSlotMs / 1000, readyToInitializedS: mean / 1000 };
  }
}

async function measure(
  app: RunningFunctionApp,
  nodes: number,
  budget: number,
  options: { sweepIntervalMs?: number; label?: string; promptInitialization?: boolean } = {},
): Promise<DriftMeasurement> {
  const { objects } = app.deps;
  const pool = `drift-n${nodes}-b${budget}${options.label ? `-${options.label}` : ''}`;
  await objects.nodeClasses.create(nodeClassOf(pool));
  await objects.nodePools.create(nodePoolOf(pool, nodes, budget));
  const claims = () => objects.nodeClaims.list({ labelSelector: `karpenter.sh/nodepool=${pool}` });
  let original = new Set<string>();
  await sweepUntil(
    app,
    pool,
    async () => {
      const current = await claims();
      original = new Set(current.map((c) => c.metadata.name));
      return current.length === nodes && current.every(initialized);
    },
    300_000,
    { intervalMs: SWEEP_INTERVAL_MS },
  );

  await objects.nodeClasses.mergePatch(pool, { spec: { imageFamily: 'AzureLinux' } });
  // The clock starts at the first sweep after the change, which the loop below runs at once.
  const started = performance.now();
  let peakDisrupting = 0;
  const startsPerSweep: number[] = [];
  const phases = new ReplacementPhases(budget);
  const { core } = await app.deps.kube();
  await sweepUntil(
    app,
    pool,
    async () => {
      const [current, allNodes] = await Promise.all([claims(), listNodes(core)]);
      const old = current.filter((c) => original.has(c.metadata.name));
      const disrupting = old.filter((c) => {
        const id = c.status?.providerID?.toLowerCase();
        return isDisrupting(
          c,
          allNodes.filter((n) => id && n.spec.providerID?.toLowerCase() === id),
        );
      });
      peakDisrupting = Math.max(peakDisrupting, disrupting.length);
      const fresh = current.filter((c) => !original.has(c.metadata.name));
      phases.observe(performance.now(), old.length - disrupting.length, disrupting.length, fresh, allNodes);
      return old.length === 0 && fresh.length === nodes && fresh.every(initialized);
    },
    900_000,
    {
      intervalMs: options.sweepIntervalMs ?? SWEEP_INTERVAL_MS,
      onSweep: (n) => startsPerSweep.push(n),
      ...(options.promptInitialization ? { promptInitializationEveryMs: SWEEP_INTERVAL_MS } : {}),
    },
  );
  const makespanS = (performance.now() - started) / 1000;

  // Scale the pool away through termination, so later cases do not carry its nodes.
  await objects.nodePools.mergePatch(pool, { spec: { replicas: 0 } });
  await sweepUntil(app, pool, async () => (await claims()).length === 0, 300_000, {
    intervalMs: SWEEP_INTERVAL_MS,
  });
  await objects.nodePools.delete(pool);
  await objects.nodeClasses.delete(pool);
  return { nodes, budget, makespanS, peakDisrupting, startsPerSweep, ...phases.summary() };
}

/** Makespan over ceil(N/B) replacement cycles, one cycle being the makespan of N = 1, B = 1. */
function waveRatio(row: DriftMeasurement, cycleS: number | undefined): number | undefined {
  return cycleS ? row.makespanS / (Math.ceil(row.nodes / row.budget) * cycleS) : undefined;
}

export const WAVE_RATIO_GOAL = 1.05;

/** The sweep period of the waves measurement: the local stack's at speed 1 (the app's default is 15 s). */
const WAVE_SWEEP_INTERVAL_MS = 5_000;

/** DRIFT_BENCH_WAVES="12x2" (the default) or "off". */
function wavesFromEnv(): { nodes: number; budget: number } | undefined {
  const raw = process.env.DRIFT_BENCH_WAVES?.trim() || '12x2';
  if (raw === 'off') return undefined;
  const [nodes, budget] = raw.split('x').map(Number);
  if (!nodes || !budget) throw new Error(`DRIFT_BENCH_WAVES: ${JSON.stringify(raw)} is not NxB or off`);
  return { nodes, budget };
}

interface WavesMeasurement {
  /** 'events+init': as 'events', with initialization run every 250 ms besides the sweep (a diagnosis). */
  mode: 'timer' | 'events' | 'events+init';
  /** One cycle and one wave per run, measured in turn, so each ratio has its own cycle. */
  runs: { cycle: DriftMeasurement; row: DriftMeasurement }[];
}

/** DRIFT_BENCH_WAVE_RUNS: how many times each waves case runs (default 3), so the ratio has a spread. */
function waveRunsFromEnv(): number {
  const runs = Number(process.env.DRIFT_BENCH_WAVE_RUNS?.trim() || '3');
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error('DRIFT_BENCH_WAVE_RUNS must be a positive integer');
  return runs;
}

/**
 * One cycle (N=1, B=1) and N under B, both with the sweep every 5 s, `runs` times. 'timer': a freed slot
 * waits for the next sweep; 'events': the bridge's NodeClaim deletion event starts the next replacement
 * at once.
 */
async function measureWaves(
  app: RunningFunctionApp,
  waves: { nodes: number; budget: number; runs: number },
  mode: WavesMeasurement['mode'],
): Promise<WavesMeasurement> {
  const pace = {
    sweepIntervalMs: WAVE_SWEEP_INTERVAL_MS,
    label: mode === 'events+init' ? 'init' : mode,
    promptInitialization: mode === 'events+init',
  };
  const runs: WavesMeasurement['runs'] = [];
  for (let run = 1; run <= waves.runs; run++) {
    const cycle = await measure(app, 1, 1, pace);
    const row = await measure(app, waves.nodes, waves.budget, pace);
    process.stderr.write(
      `[drift-bench] waves (${mode}) run ${run}/${waves.runs}: cycle ${cycle.makespanS.toFixed(1)} s, N=${waves.nodes} B=${waves.budget} ${row.makespanS.toFixed(1)} s, ratio ${ratioOf(cycle, row).toFixed(2)}, started per sweep ${row.startsPerSweep.join(' ') || '-'}, idle slot-s ${row.idleSlotS.toFixed(1)}, Ready→Initialized ${row.readyToInitializedS.toFixed(1)} s (cycle ${cycle.readyToInitializedS.toFixed(1)} s)\n`,
    );
    runs.push({ cycle, row });
  }
  return { mode, runs };
}

const ratioOf = (cycle: DriftMeasurement, row: DriftMeasurement) =>
  row.makespanS / (Math.ceil(row.nodes / row.budget) * cycle.makespanS);

/** Mean, sample standard deviation, min and max. */
export function spreadOf(values: readonly number[]): { mean: number; sd: number; min: number; max: number } {
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  const variance =
    values.length > 1 ? values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / (values.length - 1) : 0;
  return { mean, sd: Math.sqrt(variance), min: Math.min(...values), max: Math.max(...values) };
}

function wavesTable(rows: readonly WavesMeasurement[]): string {
  const header = [
    'freed slot reused',
    'runs',
    'cycle s (mean)',
    'makespan s (mean)',
    'ratio mean ± sd',
    'ratio min–max',
    'goal',
    'met (mean, every run)',
    'started by a sweep',
    'idle slot-s per wave',
    'Ready→Initialized s',
  ];
  const lines = rows.map(({ mode, runs }) => {
    const ratios = spreadOf(runs.map(({ cycle, row }) => ratioOf(cycle, row)));
    const cycles = spreadOf(runs.map(({ cycle }) => cycle.makespanS));
    const makespans = spreadOf(runs.map(({ row }) => row.makespanS));
    return [
      mode === 'timer'
        ? 'at the next sweep'
        : mode === 'events'
          ? 'on the deletion event'
          : 'on the event, initialized at once',
      String(runs.length),
      cycles.mean.toFixed(1),
      makespans.mean.toFixed(1),
      `${ratios.mean.toFixed(2)} ± ${ratios.sd.toFixed(2)}`,
      `${ratios.min.toFixed(2)}–${ratios.max.toFixed(2)}`,
      `<= ${WAVE_RATIO_GOAL}`,
      `${ratios.mean <= WAVE_RATIO_GOAL ? 'yes' : 'no'}, ${ratios.max <= WAVE_RATIO_GOAL ? 'yes' : 'no'}`,
      // Of all replacements started in the runs: the rest were started by the freed-slot event.
      `${runs.reduce((sum, { row }) => sum + row.startsPerSweep.reduce((a, b) => a + b, 0), 0)} of ${runs.reduce((sum, { row }) => sum + row.nodes, 0)}`,
      spreadOf(
        runs.map(({ row }) => row.idleSlotS / Math.max(1, Math.ceil(row.nodes / row.budget) - 1)),
      ).mean.toFixed(1),
      `${spreadOf(runs.map(({ row }) => row.readyToInitializedS)).mean.toFixed(1)} (cycle ${spreadOf(runs.map(({ cycle }) => cycle.readyToInitializedS)).mean.toFixed(1)})`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n');
}

function table(rows: readonly DriftMeasurement[]): string {
  const baseline = new Map(rows.filter((r) => r.budget === 1).map((r) => [r.nodes, r.makespanS]));
  const header = [
    'N drifted',
    'budget B',
    'makespan s',
    'serialized (B=1) s',
    'speed-up',
    'peak disrupting',
    'started per sweep',
    `ratio to ceil(N/B) cycles (goal <= ${WAVE_RATIO_GOAL})`,
  ];
  const cycleS = rows.find((r) => r.nodes === 1 && r.budget === 1)?.makespanS;
  const lines = rows.map((r) => {
    const base = baseline.get(r.nodes);
    const ratio = waveRatio(r, cycleS);
    return [
      String(r.nodes),
      String(r.budget),
      r.makespanS.toFixed(1),
      base !== undefined ? base.toFixed(1) : '-',
      base !== undefined ? `${(base / r.makespanS).toFixed(1)}×` : '-',
      String(r.peakDisrupting),
      r.startsPerSweep.join(' '),
      ratio !== undefined ? ratio.toFixed(2) : '-',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n');
}

export async function runDriftBench(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[drift-bench] ${line}\n`);
  const controlPlane = await startControlPlane({ crdDirectories: [crdDirectory], scheduler: false, log });
  const stops: (() => Promise<void>)[] = [() => controlPlane.stop()];
  try {
    const azurite = await startAzurite();
    stops.push(() => azurite.stop());
    const emulator = await startArmEmulator({
      latencies: { createMs: CREATE_MS, deleteMs: DELETE_MS, retryAfterSeconds: 0.5 },
    });
    stops.push(() => emulator.stop());
    const appSettings = {
      ...localAppSettings({
        clusterName: 'bench',
        kubeconfigPath: controlPlane.kubeconfigPath,
        armEndpoint: emulator.url,
        armCaCertPem: emulator.caCertPem,
        bootstrapCaCertPem: emulator.caCertPem,
        storageConnectionString: azurite.connectionString,
        queueName: 'drift-bench-events',
        unavailableOfferingsTable: 'driftbenchofferings',
        pollIntervalSeconds: 0.5,
        maxPollIntervalSeconds: 0.5,
      }),
      REPLACEMENT_POLL_SECONDS: '0.5',
      // 36 polls, as the fallback was before it had a setting of its own (no sweep wakes here).
      REPLACEMENT_FALLBACK_SECONDS: '18',
      DRAIN_POLL_SECONDS: '0.5',
    };
    const app = await startFunctionApp({ appSettings, log: silentLogger, sweepSchedule: '0 0 0 1 1 *' });
    stops.push(() => app.stop());
    const simulator = await startKubeletSimulator({
      kubeconfigPath: controlPlane.kubeconfigPath,
      emulator,
      subscriptionId: app.settings.azure.subscriptionId,
      resourceGroup: app.settings.azure.resourceGroup,
      bootDelayMs: BOOT_MS,
      readyDelayMs: READY_MS,
    });
    stops.push(() => simulator.stop());

    // Right after the CRDs are established their storage may still answer 429 for a moment.
    for (let attempt = 1; ; attempt++) {
      try {
        await app.deps.objects.nodePools.list();
        await app.deps.objects.nodeClasses.list();
        await app.deps.objects.nodeClaims.list();
        break;
      } catch (error) {
        if (attempt >= 60) throw error;
        await sleep(500);
      }
    }
    const rows: DriftMeasurement[] = [];
    for (const { nodes, budget } of casesFromEnv()) {
      const row = await measure(app, nodes, budget);
      rows.push(row);
      log(`N=${nodes} B=${budget}: ${row.makespanS.toFixed(1)} s, peak disrupting ${row.peakDisrupting}`);
    }
    process.stdout.write(
      `\nDrift replacement makespan (VM creation ${CREATE_MS / 1000} s, boot ${BOOT_MS / 1000} s, Ready ${READY_MS / 1000} s, sweep every ${SWEEP_INTERVAL_MS} ms)\n`,
    );
    process.stdout.write(`${table(rows)}\n`);

    const wavesCase = wavesFromEnv();
    if (wavesCase) {
      const waves = { ...wavesCase, runs: waveRunsFromEnv() };
      const without = await measureWaves(app, waves, 'timer');
      const bridge = await startBridge({
        queue: {
          mode: 'connectionString',
          connectionString: azurite.connectionString,
          queueName: 'drift-bench-events',
        },
        kubernetes: { mode: 'kubeconfig', kubeconfigPath: controlPlane.kubeconfigPath },
        source: '/bench/event-bridge',
        shutdownFlushSeconds: 1,
        logger: silentLogger,
      });
      stops.push(() => bridge.stop());
      const withEvents = await measureWaves(app, waves, 'events');
      const diagnosis =
        process.env.DRIFT_BENCH_WAVE_DIAGNOSIS?.trim() === 'off'
          ? []
          : [await measureWaves(app, waves, 'events+init')];
      process.stdout.write(
        `\nWaves: N=${waves.nodes} drifted under budget B=${waves.budget}, sweep every ${WAVE_SWEEP_INTERVAL_MS / 1000} s, ${waves.runs} runs; one cycle = the makespan of N=1, B=1 measured just before each wave\n`,
      );
      process.stdout.write(`${wavesTable([without, withEvents, ...diagnosis])}\n`);
      if (diagnosis.length > 0) {
        process.stdout.write(
          'The last row is a diagnosis, not the app: initialization run every 250 ms as if a Node turning Ready were an event (DRIFT_BENCH_WAVE_DIAGNOSIS=off skips it).\n',
        );
      }
    }
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}
