// One lifecycle sweep over generated clusters of realistic Nodes and NodeClaims, against a real
// kube-apiserver (no scheduler or controller-manager: nothing but the sweep changes the objects). Each size
// is swept three ways: the full paginated lists every sweep used to make (the baseline), the watch-fed
// reader's first sweep (its one full list) and its steady-state sweep; then a sweep with 50 changes.
// Traffic is counted at the client's HTTP layer (http-traffic.ts); memory is the heap growth while the
// sweep runs, sampled, plus what the watch caches keep between sweeps.
import { MemoryDecisionRecords } from '../support/memory-decision-records.js';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import { kubeClientsFromConfig } from '../../shared/kube/client.js';
import { karpenterObjects } from '../../shared/kube/custom-objects.js';
import { kubeEventRecorder } from '../../shared/kube/events.js';
import { kubePorts, type LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import { runSweepSteps, type SweepResult } from '../../shared/lifecycle/sweep/sweep.js';
import { createLeftoverMemory } from '../../shared/lifecycle/sweep-step/leftover-memory.js';
import { listingClusterReader, watchingClusterReader } from '../../shared/kube/cluster-reader.js';
import { createMetrics } from '../../shared/observability/metrics.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { OrchestrationClient } from '../../shared/runtime/definitions.js';
import type { Settings } from '../../shared/config/settings.js';
import { CountingKubeConfig, type TrafficTotals } from './http-traffic.js';
import {
  nodeAnnotations,
  nodeClaimMetadata,
  nodeClaimStatus,
  nodeLabels,
  nodeStatus,
} from './realistic-objects.js';

const subscription = '00000000-0000-0000-0000-0000000000bb';
const providerId = (vm: string) =>
  `azure:///subscriptions/${subscription}/resourceGroups/rg-bench/providers/Microsoft.Compute/virtualMachines/${vm}`;

/** The settings the sweep's steps read; nothing here reaches Azure. */
const benchSettings = {
  lifecycle: { sweepSchedule: '*/15 * * * * *', registrationTimeoutMinutes: 15 },
  launch: {
    pollIntervalSeconds: 5,
    maxPollIntervalSeconds: 30,
    deadlineMinutes: 15,
    skuCacheSeconds: 3600,
    nodeImageCacheSeconds: 3600,
  },
} as Settings;

const noOrchestrations: OrchestrationClient = {
  startNew: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
  getStatus: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
  raiseEvent: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
  terminate: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
  purge: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
};

/**
 * Dependencies for the sweep with the counting client. Only the Kubernetes side is real: the bench's
 * sweep never reaches Azure (no NodeClaim launches, times out or terminates), so the Azure clients are
 * absent, and touching them would fail loudly.
 */
export function benchDependencies(
  config: CountingKubeConfig,
  reads: 'list' | 'watch',
): LifecycleDependencies {
  const clients = kubeClientsFromConfig(config);
  const kube = () => Promise.resolve(clients);
  const objects = karpenterObjects(kube);
  const missing = new Proxy(
    {},
    {
      get: () => {
        throw new Error('the sweep bench does not use Azure');
      },
    },
  );
  return {
    settings: benchSettings,
    log: silentLogger,
    metrics: createMetrics(silentLogger),
    now: () => new Date(),
    kube,
    decisionRecords: new MemoryDecisionRecords(),
    objects,
    events: kubeEventRecorder(kube, 'sweep-bench', silentLogger),
    cloud: missing as LifecycleDependencies['cloud'],
    cluster:
      reads === 'list' ? listingClusterReader({ kube, objects }) : watchingClusterReader({ kube, objects }),
    ...kubePorts(kube, objects),
  };
}

async function inBatches<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

const apply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const zones = ['westus2-1', 'westus2-2', 'westus2-3'];

/**
 * Creates the pairs `from`..`to`-1: settled ones (registered and initialized, as this system leaves
 * them), or fresh unregistered ones when `fresh`. Nodes are written by the field managers that write
 * them in AKS (kubelet, cloud-node-manager, cilium, this system), with server-side apply.
 */
export async function createPairs(
  deps: LifecycleDependencies,
  core: CoreV1Api,
  prefix: string,
  from: number,
  to: number,
  fresh: boolean,
): Promise<void> {
  const at = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const indexes = Array.from({ length: to - from }, (_, i) => from + i);
  await inBatches(indexes, 48, async (i) => {
    const name = `${prefix}-${i}`;
    const vm = `aks-${name}`;
    const zone = zones[i % zones.length] ?? 'westus2-1';
    const own = { 'bench.example/index': String(i) };
    const claim = nodeClaimMetadata('bench', zone, own);
    const created = await deps.objects.nodeClaims.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name,
        labels: claim.labels,
        annotations: claim.annotations,
        ...(fresh ? {} : { finalizers: ['karpenter.sh/termination'] }),
      },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [
          { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
          { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D4s_v5'] },
          { key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] },
        ],
        resources: { requests: { cpu: '1500m', memory: '3Gi', pods: '12' } },
        expireAfter: '720h',
      },
    });
    const status = nodeClaimStatus(providerId(vm), vm, at);
    await deps.objects.nodeClaims.mergePatchStatus(name, {
      status: fresh ? { providerID: status.providerID, conditions: status.conditions.slice(0, 1) } : status,
    });
    // kubelet: registers the Node with its own labels and reports status.
    await core.patchNode(
      {
        name: vm,
        fieldManager: 'kubelet',
        force: true,
        body: {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: { name: vm, labels: nodeLabels(vm, zone, {}), annotations: nodeAnnotations(vm) },
          spec: {
            providerID: providerId(vm),
            ...(fresh ? { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] } : {}),
          },
        },
      },
      apply,
    );
    await core.patchNodeStatus(
      {
        name: vm,
        fieldManager: 'kubelet',
        force: true,
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name: vm }, status: nodeStatus(vm, at) },
      },
      apply,
    );
    await core.patchNode(
      {
        name: vm,
        fieldManager: 'cloud-node-manager',
        force: true,
        body: {
          apiVersion: 'v1',
          kind: 'Node',
          metadata: {
            name: vm,
            labels: { 'node.kubernetes.io/exclude-from-external-load-balancers': 'false' },
            annotations: { 'cluster-autoscaler.kubernetes.io/scale-down-disabled': 'false' },
          },
        },
      },
      apply,
    );
    if (!fresh) {
      // This system: the NodeClaim's labels, the registration and initialization marks, the finalizer
      // and owner; and no taints left (the node lifecycle controller would lift not-ready).
      await core.patchNode(
        {
          name: vm,
          fieldManager: 'nodeclaim-azure',
          force: true,
          body: {
            apiVersion: 'v1',
            kind: 'Node',
            metadata: {
              name: vm,
              labels: {
                ...claim.labels,
                'karpenter.sh/registered': 'true',
                'karpenter.sh/initialized': 'true',
              },
              finalizers: ['karpenter.sh/termination'],
              ownerReferences: [
                { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name, uid: created.metadata.uid ?? '' },
              ],
            },
          },
        },
        apply,
      );
    }
    // The apiserver's admission taints every new Node not-ready; the node lifecycle controller (not run
    // here) would lift it once the Node reports Ready.
    await core.patchNode(
      {
        name: vm,
        body: [
          {
            op: 'replace',
            path: '/spec/taints',
            value: fresh ? [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] : [],
          },
        ],
      },
      jsonPatch,
    );
  });
}

export interface SweepMeasurement {
  size: number;
  reads: string;
  changes: number;
  ms: number;
  traffic: TrafficTotals;
  heapGrowthMb: number;
  result: Exclude<SweepResult, { status: 'skipped' }>;
}

export async function measureSweep(
  deps: LifecycleDependencies,
  config: CountingKubeConfig,
  labels: { size: number; reads: string; changes: number },
): Promise<SweepMeasurement> {
  config.reset();
  const heapBefore = process.memoryUsage().heapUsed;
  let heapPeak = heapBefore;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  }, 5);
  const started = performance.now();
  const result = await runSweepSteps(
    deps,
    { orchestrations: noOrchestrations, log: silentLogger },
    { memory: { leftovers: createLeftoverMemory() } },
  );
  const ms = performance.now() - started;
  clearInterval(sampler);
  heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed);
  await sleep(20); // lets the counting gunzip streams flush
  if (result.status === 'skipped') throw new Error(result.reason);
  const failed = result.steps.reduce((n, step) => n + step.failed, 0);
  if (failed > 0) throw new Error(`${failed} objects failed in the sweep`);
  return { ...labels, ms, traffic: config.totals(), heapGrowthMb: (heapPeak - heapBefore) / 2 ** 20, result };
}

const sizes = (process.env['SWEEP_BENCH_SIZES'] ?? '500,5000').split(',').map(Number);
const changesPerSweep = 50;
const crdDirectory = fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url));
const kb = (bytes: number) => (bytes / 1024).toFixed(0);

function table(rows: readonly (SweepMeasurement & { baselineBytes: number })[]): string {
  const header = [
    'pairs',
    'reads',
    'changes',
    'ms',
    'requests',
    'conns',
    'wire KB',
    'decoded KB',
    '% of full list',
    'heap MB',
    'writes/change',
  ];
  const lines = rows.map((r) => {
    const writes = r.traffic.requests - (r.traffic.byMethod['GET'] ?? 0);
    return [
      String(r.size),
      r.reads,
      String(r.changes),
      r.ms.toFixed(0),
      String(r.traffic.requests),
      String(r.traffic.connections),
      kb(r.traffic.wireBytes),
      kb(r.traffic.decodedBytes),
      ((100 * r.traffic.decodedBytes) / r.baselineBytes).toFixed(2),
      r.heapGrowthMb.toFixed(1),
      r.changes > 0 ? (writes / r.changes).toFixed(1) : '-',
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n');
}

/** Which steps wrote for the fresh pairs, per change (registration and initialization write 2 each). */
function writesPerChange(measured: SweepMeasurement | undefined): string {
  if (!measured) return 'not measured';
  const acting = measured.result.steps.filter((step) => step.acted > 0);
  const writes = measured.traffic.requests - (measured.traffic.byMethod['GET'] ?? 0);
  return `${(writes / measured.changes).toFixed(1)} requests that write, from the steps ${acting
    .map((step) => `${step.step} (${step.acted} objects)`)
    .join(', ')}`;
}

/** Heap in use after a full collection when the bench runs with --expose-gc (npm run bench does). */
function settledHeap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

async function waitForCachedNodeClaims(deps: LifecycleDependencies, count: number): Promise<void> {
  for (let i = 0; i < 600; i += 1) {
    if ((await deps.cluster.read()).nodeClaims.length >= count) return;
    await sleep(50);
  }
  throw new Error(`the watch cache never reached ${count} NodeClaims`);
}

export async function runSweepBench(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const controlPlane = await startControlPlane({
    crdDirectories: [crdDirectory],
    scheduler: false,
    controllerManager: false,
    log,
  });
  const config = new CountingKubeConfig();
  try {
    config.loadFromFile(controlPlane.kubeconfigPath);
    const core = config.makeApiClient(CoreV1Api);
    const writer = benchDependencies(config, 'list');
    const rows: (SweepMeasurement & { baselineBytes: number })[] = [];
    let existing = 0;
    let lastChanged: SweepMeasurement | undefined;
    for (const size of sizes) {
      const started = Date.now();
      await createPairs(writer, core, 'settled', existing, size, false);
      existing = size;
      log(`cluster of ${size} realistic pairs ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

      const listed = await measureSweep(benchDependencies(config, 'list'), config, {
        size,
        reads: 'full lists',
        changes: 0,
      });
      const baselineBytes = listed.traffic.decodedBytes;
      rows.push({ ...listed, baselineBytes });

      const watching = benchDependencies(config, 'watch');
      const heapBeforeCache = settledHeap();
      rows.push({
        ...(await measureSweep(watching, config, { size, reads: 'watch, first', changes: 0 })),
        baselineBytes,
      });
      const cacheMb = (settledHeap() - heapBeforeCache) / 2 ** 20;
      await sleep(200);
      const steady = await measureSweep(watching, config, { size, reads: 'watch, steady', changes: 0 });
      rows.push({ ...steady, baselineBytes });

      await createPairs(writer, core, `fresh${size}`, 0, changesPerSweep, true);
      await waitForCachedNodeClaims(watching, size + changesPerSweep);
      const changed = await measureSweep(watching, config, {
        size,
        reads: 'watch, changes',
        changes: changesPerSweep,
      });
      const registered = changed.result.steps.find((s) => s.step === 'registration')?.acted ?? 0;
      if (registered !== changesPerSweep)
        throw new Error(`registered ${registered} pairs, expected ${changesPerSweep}`);
      rows.push({ ...changed, baselineBytes });
      lastChanged = changed;
      existing += changesPerSweep;
      watching.cluster.stop();
      log(
        `swept ${size}: full lists ${listed.ms.toFixed(0)} ms, steady ${steady.ms.toFixed(0)} ms; watch caches ≈${cacheMb.toFixed(0)} MB`,
      );
      if (size === sizes[sizes.length - 1]) {
        const percent = (100 * steady.traffic.decodedBytes) / baselineBytes;
        const goal = (ok: boolean) => (ok ? 'met' : 'MISSED');
        process.stdout.write(
          `\nOne lifecycle sweep over realistic Nodes (≈19 KB each) and NodeClaims\n${table(rows)}\n`,
        );
        process.stdout.write(
          `\nGoals at ${size} pairs, steady state: bytes ≤ 5% of one full list → ${percent.toFixed(2)}% (${goal(percent <= 5)}); ` +
            `time ≤ 300 ms → ${steady.ms.toFixed(0)} ms (${goal(steady.ms <= 300)}); ` +
            `heap ≤ 50 MB → ${steady.heapGrowthMb.toFixed(1)} MB (${goal(steady.heapGrowthMb <= 50)}). ` +
            `The watch caches keep ≈${cacheMb.toFixed(0)} MB between sweeps (slim Nodes, no managedFields).\n` +
            `Writes per change with ${changesPerSweep} fresh pairs: ${writesPerChange(lastChanged)}. In the steady state no step writes.\n`,
        );
      }
    }
  } finally {
    config.close();
    await controlPlane.stop();
  }
}
