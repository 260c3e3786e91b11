// One lifecycle sweep over generated clusters of growing size, against a real kube-apiserver. Every
// NodeClaim/Node pair is settled (registered and initialized) except a handful of fresh ones per round,
// which is what a sweep sees in a steady cluster: the reads grow with the cluster, the writes with the
// changes. API requests are counted at the client (every request passes the kubeconfig's authentication
// hook), memory is the heap growth while the sweep runs, sampled.
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import type { RequestContext } from '@kubernetes/client-node';
import { kubeClientsFromConfig } from '../../shared/kube/client.js';
import { karpenterObjects } from '../../shared/kube/custom-objects.js';
import { kubeEventRecorder } from '../../shared/kube/events.js';
import type { LifecycleDependencies } from '../../shared/lifecycle/dependencies.js';
import { runSweepSteps, type SweepResult } from '../../shared/lifecycle/sweep.js';
import { createLeftoverMemory } from '../../shared/lifecycle/sweep/launch-leftovers.js';
import { createMetrics } from '../../shared/observability/metrics.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { OrchestrationClient } from '../../shared/runtime/definitions.js';
import type { Settings } from '../../shared/config/settings.js';

/** A KubeConfig that counts the requests made through it, by HTTP method. */
export class CountingKubeConfig extends KubeConfig {
  readonly counts = new Map<string, number>();

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    const method = String(context.getHttpMethod());
    this.counts.set(method, (this.counts.get(method) ?? 0) + 1);
    return super.applySecurityAuthentication(context);
  }

  reset(): void {
    this.counts.clear();
  }

  total(): number {
    return [...this.counts.values()].reduce((a, b) => a + b, 0);
  }
}

const subscription = '00000000-0000-0000-0000-0000000000bb';
const providerId = (vm: string) =>
  `azure:///subscriptions/${subscription}/resourceGroups/rg-bench/providers/Microsoft.Compute/virtualMachines/${vm}`;

/** The settings the sweep's steps read; nothing here reaches Azure. */
const benchSettings = {
  lifecycle: { sweepSchedule: '*/15 * * * * *', registrationTimeoutMinutes: 15 },
  launch: { pollIntervalSeconds: 5, maxPollIntervalSeconds: 30, deadlineMinutes: 15, skuCacheSeconds: 3600 },
} as Settings;

const noOrchestrations: OrchestrationClient = {
  startNew: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
  getStatus: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
  terminate: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
  purge: () => Promise.reject(new Error('the bench cluster has no deleted NodeClaims')),
};

/**
 * Dependencies for the sweep with the counting client. Only the Kubernetes side is real: the bench's
 * sweep never reaches Azure (no NodeClaim launches, times out or terminates), so the Azure clients are
 * absent, and touching them would fail loudly.
 */
export function benchDependencies(config: CountingKubeConfig): LifecycleDependencies {
  const clients = kubeClientsFromConfig(config);
  const kube = () => Promise.resolve(clients);
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
    objects: karpenterObjects(kube),
    events: kubeEventRecorder(kube, 'sweep-bench', silentLogger),
    vms: missing as LifecycleDependencies['vms'],
    skus: missing as LifecycleDependencies['skus'],
    unavailable: missing as LifecycleDependencies['unavailable'],
  };
}

const conditions = (types: string[], at: string) =>
  types.map((type) => ({ type, status: 'True', reason: type, message: '', lastTransitionTime: at }));

async function inBatches<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<unknown>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await work(items[next++] as T);
    }),
  );
}

/** Creates the pairs `from`..`to`-1: settled ones, or fresh unregistered ones when `fresh`. */
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
  await inBatches(indexes, 24, async (i) => {
    const name = `${prefix}-${i}`;
    const vm = `aks-${name}`;
    const labels = { 'karpenter.sh/nodepool': 'bench', 'bench.example/index': String(i) };
    const created = await deps.objects.nodeClaims.create({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: { name, labels, ...(fresh ? {} : { finalizers: ['karpenter.sh/termination'] }) },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
      },
    });
    await deps.objects.nodeClaims.mergePatchStatus(name, {
      status: {
        providerID: providerId(vm),
        ...(fresh ? {} : { nodeName: vm }),
        conditions: conditions(fresh ? ['Launched'] : ['Launched', 'Registered', 'Initialized', 'Ready'], at),
      },
    });
    const node: V1Node = {
      metadata: {
        name: vm,
        labels: fresh
          ? { 'kubernetes.io/hostname': vm }
          : { ...labels, 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' },
        ...(fresh
          ? {}
          : {
              finalizers: ['karpenter.sh/termination'],
              ownerReferences: [
                { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name, uid: created.metadata.uid ?? '' },
              ],
            }),
      },
      spec: {
        providerID: providerId(vm),
        ...(fresh ? { taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }] } : {}),
      },
    };
    await core.createNode({ body: node });
    await core.patchNodeStatus(
      {
        name: vm,
        body: {
          status: {
            allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
            conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' }],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );
    // The apiserver's admission taints every new Node not-ready; the node lifecycle controller (not run
    // here, so nothing else touches the objects) would lift it once the Node reports Ready.
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
      setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
    );
  });
}

export interface SweepMeasurement {
  size: number;
  changes: number;
  ms: number;
  requests: number;
  byMethod: Record<string, number>;
  heapGrowthMb: number;
  result: SweepResult;
}

export async function measureSweep(
  deps: LifecycleDependencies,
  config: CountingKubeConfig,
  size: number,
  changes: number,
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
  return {
    size,
    changes,
    ms,
    requests: config.total(),
    byMethod: Object.fromEntries(config.counts),
    heapGrowthMb: (heapPeak - heapBefore) / 2 ** 20,
    result,
  };
}
