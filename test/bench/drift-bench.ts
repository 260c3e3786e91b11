// Drift replacement makespan, measured: for N drifted nodes of a static NodePool and a budget of B, the
// time from the AKSNodeClass change (imageFamily Ubuntu2204 → AzureLinux) until every old NodeClaim is
// gone and N replacements are Initialized. B = 1 is the serialized baseline (one replacement at a time,
// the reference failure of DESIGN.md Problem (2)). Everything runs for real: the control plane (with
// kube-controller-manager), Azurite, the ARM emulator through the real SDK with VM creation scaled down,
// the Function App's orchestrations in the in-process host, the kubelet simulator; the sweep runs in a
// loop as the timer would, every SWEEP_INTERVAL_MS.
import { fileURLToPath } from 'node:url';
import { startArmEmulator } from '../../local/arm-emulator/index.js';
import { startAzurite } from '../../local/azurite/launcher.js';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import { startKubeletSimulator } from '../../local/kubelet-simulator/index.js';
import { localAppSettings } from '../../local/stack/app-settings.js';
import { startFunctionApp, type RunningFunctionApp } from '../../local/stack/function-app.js';
import { isConditionTrue } from '../../shared/decisions/conditions.js';
import { listNodes } from '../../shared/kube/nodes.js';
import { runLifecycleSweep } from '../../shared/lifecycle/sweep.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../shared/models/index.js';
import { silentLogger } from '../../shared/observability/logger.js';
import { isDisrupting } from '../../shared/decisions/disruption-state.js';

/** Scaled latencies: a ~100 s VM creation becomes 4 s (1:25), boot and Ready likewise. */
const CREATE_MS = 4_000;
const DELETE_MS = 400;
const BOOT_MS = 1_000;
const READY_MS = 400;
const SWEEP_INTERVAL_MS = 250;

const defaultCases: readonly { nodes: number; budget: number }[] = [
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
}

const crdDirectory = fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const initialized = (c: NodeClaim) => isConditionTrue(c.status?.conditions, 'Initialized');

function nodeClassOf(name: string): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name },
    spec: { imageFamily: 'Ubuntu2204' },
  };
}

function nodePoolOf(name: string, replicas: number, budget: number): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      replicas,
      disruption: { budgets: [{ nodes: String(budget) }] },
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name },
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] },
          ],
        },
      },
    },
  };
}

async function sweepUntil(
  app: RunningFunctionApp,
  pool: string,
  done: () => Promise<boolean>,
  timeoutMs: number,
  onSweep?: (started: number) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const context = { orchestrations: app.host.orchestrations, log: silentLogger };
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${pool}: not done within ${timeoutMs / 1000} s`);
    const result = await runLifecycleSweep(app.deps, context, {
      nodeClaimSelector: `karpenter.sh/nodepool=${pool}`,
    });
    if (result.status !== 'skipped') {
      const started = result.steps.find((s) => s.step === 'drift-replacement')?.acted ?? 0;
      if (started > 0) onSweep?.(started);
    }
    await sleep(SWEEP_INTERVAL_MS);
  }
}

async function measure(app: RunningFunctionApp, nodes: number, budget: number): Promise<DriftMeasurement> {
  const { objects } = app.deps;
  const pool = `drift-n${nodes}-b${budget}`;
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
  );

  await objects.nodeClasses.mergePatch(pool, { spec: { imageFamily: 'AzureLinux' } });
  const started = performance.now();
  let peakDisrupting = 0;
  const startsPerSweep: number[] = [];
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
      return old.length === 0 && fresh.length === nodes && fresh.every(initialized);
    },
    900_000,
    (n) => startsPerSweep.push(n),
  );
  const makespanS = (performance.now() - started) / 1000;

  // Scale the pool away through termination, so later cases do not carry its nodes.
  await objects.nodePools.mergePatch(pool, { spec: { replicas: 0 } });
  await sweepUntil(app, pool, async () => (await claims()).length === 0, 300_000);
  await objects.nodePools.delete(pool);
  await objects.nodeClasses.delete(pool);
  return { nodes, budget, makespanS, peakDisrupting, startsPerSweep };
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
  ];
  const lines = rows.map((r) => {
    const base = baseline.get(r.nodes);
    return [
      String(r.nodes),
      String(r.budget),
      r.makespanS.toFixed(1),
      base !== undefined ? base.toFixed(1) : '-',
      base !== undefined ? `${(base / r.makespanS).toFixed(1)}×` : '-',
      String(r.peakDisrupting),
      r.startsPerSweep.join(' '),
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
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}
