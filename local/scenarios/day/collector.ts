// Collects the day's history while it plays: the recorder's object versions (shared, not copied), the
// ARM emulator's request log drained every second (the emulator keeps only its latest 20,000 entries),
// failed VM creations from its change feed, the API server's own metrics every few seconds, and a sample
// of the picture's series (nodes per pool, $/h, the requests' lower bound, pending pods), and every status
// version of the day's PodDisruptionBudgets (what the API server judged each eviction by; the recorder
// stays generic and does not watch them).
import { request } from 'node:https';
import { KubeConfig, Watch, type V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { RequestLogEntry } from '../../arm-emulator/request-log.js';
import type { LocalStack } from '../../stack/local-stack.js';
import type { Recorder } from '../../view/recorder.js';
import { WellKnown } from '../../../shared/models/index.js';
import { cpuCores, gibibytes } from '../deployment-set.js';
import type { DayClock } from './day-clock.js';
import type {
  ApiServerSample,
  ArmRequest,
  DayHistory,
  PdbStatusVersion,
  VmFailure,
} from './invariants/history.js';
import { parseApiServerMetrics } from './invariants/request-rates.js';
import { DAY_ZONES, type DayPlan, type PoolName, type WorkloadPlan } from './plan.js';
import { minimumNodes, requestsLowerBound, vmHourlyPrice, type PoolDemand } from './pricing.js';
import { poolObjectName, setName } from './workload.js';

export interface DaySample {
  at: number;
  hour: number;
  nodesByPool: Record<string, number>;
  pricePerHour: number;
  lowerBoundPerHour: number;
  pending: number;
}

/** The parts of the history the scenario writes itself. */
export type WritableHistory = {
  -readonly [K in keyof DayHistory]: DayHistory[K] extends readonly (infer T)[] ? T[] : DayHistory[K];
};

export interface DayCollector {
  readonly history: WritableHistory;
  readonly samples: DaySample[];
  /** Drains the request log once more and stops every timer. */
  stop(): void;
}

export function startCollector(
  stack: LocalStack,
  recorder: Recorder,
  plan: DayPlan,
  clock: DayClock,
  runId: string,
  /** The day's namespace, whose PodDisruptionBudgets are watched. */
  namespace: string,
  sampleMs: number,
): DayCollector {
  const controls = stack.emulator.controls;
  const armRequests: ArmRequest[] = [];
  const vmFailures: VmFailure[] = [];
  const apiServer: ApiServerSample[] = [];
  const samples: DaySample[] = [];
  const pdbStatuses: PdbStatusVersion[] = [];
  const history: WritableHistory = {
    nodeClaims: recorder.history.nodeClaims,
    nodes: recorder.history.nodes,
    pods: recorder.history.pods,
    armRequests,
    vmFailures,
    poolBudgets: [],
    poolChanges: [],
    pools: plan.pools.map((p) => ({
      name: poolObjectName(p.name, runId),
      consolidateAfterMs: p.consolidateAfterHours * clock.msPerHour,
    })),
    pdbs: plan.workloads.flatMap((w) => (w.pdb ? [{ set: setName(w, runId), ...w.pdb }] : [])),
    pdbStatuses,
    replicas: [],
    doNotDisruptSets: plan.workloads.filter((w) => w.doNotDisrupt).map((w) => setName(w, runId)),
    daemonSet: `agent-${runId}`,
    disturbances: [],
    brokenNodes: [],
    apiServer,
    injectedThrottles: 0,
  };

  let lastSeq = 0;
  const drain = (): void => {
    for (const entry of controls.requests({ afterSeq: lastSeq })) {
      lastSeq = entry.seq;
      armRequests.push(armRequestOf(entry));
    }
  };
  const offVm = controls.onVmChange((change) => {
    if (change.type === 'failed' && change.vm.resourceGroup === stack.resourceGroup)
      vmFailures.push({ at: Date.now(), vmName: change.vm.name, code: change.vm.failure?.code ?? 'unknown' });
  });

  const config = new KubeConfig();
  config.loadFromFile(stack.kubeconfigPath);
  const server = config.getCurrentCluster()?.server ?? '';
  let sampling = false;
  const sampleApiServer = async (): Promise<void> => {
    if (sampling) return;
    sampling = true;
    try {
      const text = await getText(config, `${server}/metrics`);
      apiServer.push(parseApiServerMetrics(text, Date.now()));
    } catch {
      // The API server is away (the outage): the counters are read again when it is back.
    } finally {
      sampling = false;
    }
  };

  const stopPdbWatch = watchPdbStatuses(config, namespace, pdbStatuses);

  const poolOfSet = new Map(plan.workloads.map((w) => [setName(w, runId), w]));
  const sample = (): void => {
    const now = Date.now();
    const nodesByPool: Record<string, number> = Object.fromEntries(plan.pools.map((p) => [p.name, 0]));
    for (const claim of recorder.nodeClaims.values()) {
      const pool = plan.pools.find(
        (p) => poolObjectName(p.name, runId) === claim.metadata.labels?.[WellKnown.nodePoolLabel],
      );
      if (pool && claim.status?.providerID) nodesByPool[pool.name] = (nodesByPool[pool.name] ?? 0) + 1;
    }
    const pricePerHour = controls
      .vms()
      .filter((vm) => vm.resourceGroup === stack.resourceGroup)
      .reduce((sum, vm) => sum + vmHourlyPrice(vm.vmSize, vm.priority), 0);
    const demand = new Map<PoolName, PoolDemand>();
    const podsOfSet = new Map<WorkloadPlan, number>();
    let pending = 0;
    for (const pod of recorder.pods.values()) {
      const workload = poolOfSet.get(pod.metadata.labels?.app ?? '');
      if (!workload || pod.metadata.deletionTimestamp) continue;
      if (pod.status?.phase !== 'Running') pending += 1;
      const wanted = demand.get(workload.pool) ?? { cpu: 0, memoryGiB: 0, nodes: 0 };
      wanted.cpu += cpuCores(workload.cpu);
      wanted.memoryGiB += gibibytes(workload.memory);
      demand.set(workload.pool, wanted);
      podsOfSet.set(workload, (podsOfSet.get(workload) ?? 0) + 1);
    }
    for (const [pool, wanted] of demand) {
      const sets = [...podsOfSet].filter(([w]) => w.pool === pool);
      wanted.nodes = minimumNodes(
        sets.map(([w, pods]) => ({ pods, zoneSpread: w.zoneSpread })),
        DAY_ZONES.length,
      );
    }
    samples.push({
      at: now,
      hour: clock.hourAt(now),
      nodesByPool,
      pricePerHour,
      lowerBoundPerHour: requestsLowerBound(plan.pools, demand),
      pending,
    });
  };

  const timers = [
    setInterval(drain, 1_000),
    setInterval(() => void sampleApiServer(), 5_000),
    setInterval(sample, sampleMs),
  ];
  void sampleApiServer();
  sample();
  return {
    history,
    samples,
    stop() {
      for (const timer of timers) clearInterval(timer);
      offVm();
      stopPdbWatch();
      drain();
    },
  };
}

/**
 * Watches the namespace's PDBs and keeps each new status version (a reopened watch replays every PDB as
 * ADDED; a resourceVersion already kept is not kept again). Returns the stop.
 */
function watchPdbStatuses(config: KubeConfig, namespace: string, into: PdbStatusVersion[]): () => void {
  const watch = new Watch(config);
  const lastVersion = new Map<string, string>();
  let stopped = false;
  let abort: (() => void) | undefined;
  const open = (): void => {
    if (stopped) return;
    watch
      .watch(
        `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`,
        { allowWatchBookmarks: 'false' },
        (type: string, pdb: V1PodDisruptionBudget) => {
          if (type !== 'ADDED' && type !== 'MODIFIED') return;
          const name = pdb.metadata?.name ?? '';
          const version = pdb.metadata?.resourceVersion ?? '';
          if (lastVersion.get(name) === version) return;
          lastVersion.set(name, version);
          const status = pdb.status;
          if (!status) return;
          into.push({
            at: Date.now(),
            set: name,
            ...(pdb.metadata?.generation !== undefined ? { generation: pdb.metadata.generation } : {}),
            ...(status.observedGeneration !== undefined
              ? { observedGeneration: status.observedGeneration }
              : {}),
            currentHealthy: status.currentHealthy ?? 0,
            desiredHealthy: status.desiredHealthy ?? 0,
            disruptionsAllowed: status.disruptionsAllowed ?? 0,
            expectedPods: status.expectedPods ?? 0,
            disruptedPods: Object.keys(status.disruptedPods ?? {}),
          });
        },
        () => {
          // Watches end (timeouts, the outage); reopen while collecting.
          if (!stopped) setTimeout(open, 200);
        },
      )
      .then(
        (request: { abort(): void }) => {
          abort = () => request.abort();
        },
        () => {
          if (!stopped) setTimeout(open, 500);
        },
      );
  };
  open();
  return () => {
    stopped = true;
    abort?.();
  };
}

function armRequestOf(entry: RequestLogEntry): ArmRequest {
  const body = entry.method === 'PUT' && entry.kind === 'putVm' ? placementOf(entry.body) : undefined;
  return {
    at: Date.parse(entry.time),
    method: entry.method,
    kind: entry.kind,
    vmName: entry.vmName,
    status: entry.status,
    errorCode: entry.errorCode,
    throttled: entry.throttled,
    ...(body ? { placement: body } : {}),
  };
}

function placementOf(body: unknown): ArmRequest['placement'] {
  if (typeof body !== 'object' || body === null) return undefined;
  const vm = body as {
    zones?: string[];
    properties?: { hardwareProfile?: { vmSize?: string }; priority?: string };
  };
  const vmSize = vm.properties?.hardwareProfile?.vmSize;
  if (!vmSize) return undefined;
  return { vmSize, zone: vm.zones?.[0] ?? '', priority: vm.properties?.priority ?? 'Regular' };
}

async function getText(config: KubeConfig, url: string): Promise<string> {
  const options: Parameters<typeof request>[1] = { method: 'GET', timeout: 5_000 };
  await config.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const req = request(url, options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        response.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`GET ${url}: ${String(response.statusCode)}`)),
      );
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}
