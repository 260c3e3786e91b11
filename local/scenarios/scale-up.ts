// scale-up: 60 pending pods (three Deployments of 20 with different requests, each spread across zones
// with maxSkew 1) go from Pending to Running with nothing but a dynamic NodePool. The real kube-scheduler
// marks them Unschedulable, the bridge signals the provisioning batcher, one window solves over all of
// them and creates NodeClaims, launch and registration bring the Nodes up, the scheduler binds the pods
// and the simulated kubelet runs them.
import type { V1Deployment } from '@kubernetes/client-node';
import type { Offering } from '../../shared/decisions/offerings.js';
import { priceOf, type PriceBook } from '../../shared/decisions/prices/price-book.js';
import { catalogOfferings } from '../../shared/lifecycle/launch/catalog-offerings.js';
import { WellKnown, type NodePool } from '../../shared/models/index.js';
import { RUN_LABEL } from '../stack/local-stack.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import {
  deleteNodeClaims,
  exampleNodeClass,
  patience,
  agentStartupTaint,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';
import { functionAppOf } from '../stack/local-stack.js';

const WORKLOADS = [
  { name: 'small', replicas: 20, cpu: '250m', memory: '512Mi' },
  { name: 'medium', replicas: 20, cpu: '500m', memory: '1Gi' },
  { name: 'large', replicas: 20, cpu: '1', memory: '2Gi' },
] as const;
const POD_COUNT = WORKLOADS.reduce((sum, w) => sum + w.replicas, 0);

export const scaleUp: Scenario = {
  name: 'scale-up',
  title: `scale-up: ${POD_COUNT} pending pods become Running through provisioning`,
  description:
    `Three Deployments (${WORKLOADS.map((w) => `${w.replicas} × ${w.cpu} CPU / ${w.memory}`).join(', ')}), each ` +
    'spread across zones with maxSkew 1, and a dynamic NodePool. The provisioning batcher solves the pending pods in ' +
    'windows (1 s idle / 10 s max, divided by --speed), creates NodeClaims, and every pod ends Running on a Node of the NodePool.',
  usesPods: true,
  play,
};

function dynamicNodePool(name: string, runId: string): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: { [RUN_LABEL]: runId } },
    spec: {
      disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '10%' }] },
      limits: { cpu: '200' },
      template: {
        metadata: { labels: { [RUN_LABEL]: runId } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name },
          startupTaints: [agentStartupTaint],
          expireAfter: 'Never',
          requirements: [
            { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] },
            { key: 'karpenter.azure.com/sku-cpu', operator: 'Lt', values: ['9'] },
          ],
        },
      },
    },
  };
}

function deployment(workload: (typeof WORKLOADS)[number], runId: string): V1Deployment {
  const labels = { app: `${workload.name}-${runId}`, [RUN_LABEL]: runId };
  return {
    metadata: { name: `${workload.name}-${runId}` },
    spec: {
      replicas: workload.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          topologySpreadConstraints: [
            {
              maxSkew: 1,
              topologyKey: WellKnown.zoneLabel,
              whenUnsatisfiable: 'DoNotSchedule',
              labelSelector: { matchLabels: labels },
            },
          ],
          containers: [
            {
              name: 'app',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: { cpu: workload.cpu, memory: workload.memory } },
            },
          ],
        },
      },
    },
  };
}

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId, namespace } = context;
  const app = functionAppOf(stack);
  const objects = app.deps.objects;
  const metrics = app.deps.metrics;
  const name = `scale-${runId}`;
  const nodeClass = exampleNodeClass(name, runId);
  const nodePool = dynamicNodePool(name, runId);
  await objects.nodeClasses.create(nodeClass);
  await objects.nodePools.create(nodePool);
  const windowsBefore = metrics.count('karpenter_provisioner_scheduling_duration_seconds');

  const started = Date.now();
  for (const workload of WORKLOADS) {
    await context.apps.createNamespacedDeployment({ namespace, body: deployment(workload, runId) });
  }
  context.note(
    `created ${WORKLOADS.length} Deployments, ${POD_COUNT} pods with a zone spread; no Node can take them`,
  );

  const firstClaimAt = await waitFor(context, 'the first NodeClaim', patience(stack), () =>
    recorder.history.nodeClaims.length > 0 ? recorder.history.nodeClaims[0]!.at : undefined,
  );
  context.note(`first NodeClaim ${((firstClaimAt - started) / 1000).toFixed(1)} s after the Deployments`);
  const running = await waitFor(context, `all ${POD_COUNT} pods Running`, patience(stack, 10), () => {
    const pods = [...recorder.pods.values()].filter((p) => !p.metadata.deletionTimestamp);
    const runningPods = pods.filter((p) => p.status?.phase === 'Running');
    return runningPods.length >= POD_COUNT ? runningPods : undefined;
  });
  const allRunningAt = Date.now();

  const claims = [...recorder.nodeClaims.values()];
  const claimNames = claims.map((c) => c.metadata.name);
  const nodeToClaim = new Map(claims.map((c) => [c.status?.nodeName ?? '', c.metadata.name]));
  const onOurNodes = running.filter((p) => nodeToClaim.has(p.spec?.nodeName ?? ''));
  const windows = metrics.count('karpenter_provisioner_scheduling_duration_seconds') - windowsBefore;
  const firstPending = recorder.history.pods[0]?.at ?? started;
  const sizes = claims.map(
    (c) => c.metadata.labels?.[WellKnown.instanceTypeLabel] ?? instanceTypeOf(recorder, c.status?.nodeName),
  );
  const vcpus = claims.reduce((sum, c) => sum + Number(c.status?.capacity?.cpu ?? 0), 0);
  const requestedCpu = WORKLOADS.reduce((sum, w) => sum + w.replicas * cpuCores(w.cpu), 0);
  const requestedGiB = WORKLOADS.reduce((sum, w) => sum + w.replicas * gibibytes(w.memory), 0);
  // The book provisioning and launch priced with (the emulator's Retail Prices API once refreshed).
  const book = app.deps.pricing.prices();
  const launchedPrice = sizes.reduce((sum, size) => sum + (priceOf(book, size, 'on-demand') ?? NaN), 0);
  const bound = lowerBound(await catalogOfferings(app.deps), book, requestedCpu, requestedGiB);
  const provisioningMs = firstClaimAt - firstPending;
  const bindsPerClaim = new Map<string, number>();
  for (const pod of running) {
    const claim = nodeToClaim.get(pod.spec?.nodeName ?? '');
    if (claim) bindsPerClaim.set(claim, (bindsPerClaim.get(claim) ?? 0) + 1);
  }
  const marks: TimelineMark[] = [...bindsPerClaim].map(([claim, count]) => ({
    row: claim,
    at: allRunningAt,
    label: `${count} pods running`,
    kind: 'bind',
  }));

  const invariants: Invariant[] = [
    {
      name: `all ${POD_COUNT} pods go from Pending to Running`,
      holds: running.length >= POD_COUNT,
      detail: `${running.length} Running after ${((allRunningAt - started) / 1000).toFixed(1)} s`,
    },
    {
      name: 'every pod runs on a Node of a NodeClaim that provisioning created for the NodePool',
      holds:
        onOurNodes.length === running.length &&
        claims.every((c) => c.metadata.labels?.[WellKnown.nodePoolLabel] === nodePool.metadata.name),
      detail: `${onOurNodes.length}/${running.length} pods on ${claimNames.length} NodeClaims of ${nodePool.metadata.name}`,
    },
    {
      name: 'pods were batched: fewer provisioning windows than pods',
      holds: windows >= 1 && windows < POD_COUNT,
      detail: `${windows} window(s) solved for ${POD_COUNT} pods`,
    },
  ];
  const summary = [
    `pods: ${POD_COUNT} (${WORKLOADS.map((w) => `${w.replicas} × ${w.cpu}/${w.memory}`).join(', ')}), zone spread maxSkew 1`,
    `provisioning windows: ${windows}; NodeClaims: ${claims.length} (${summarize(sizes)})`,
    `first pending pod → first NodeClaim: ${(provisioningMs / 1000).toFixed(2)} s (at --speed ${stack.timings.speed}: batch idle ${1000 / stack.timings.speed} ms)`,
    `Deployments → all pods Running: ${((allRunningAt - started) / 1000).toFixed(1)} s`,
    `vCPUs launched: ${vcpus} for ${requestedCpu} requested (lower bound of capacity: ${Math.ceil(requestedCpu)} vCPUs)`,
    `price per hour launched: $${launchedPrice.toFixed(3)} (on-demand, ${book.source === 'static' ? 'shipped price table' : `Retail Prices API as of ${book.asOf}`}) against a lower bound of ` +
      `$${bound.toFixed(3)} (${(launchedPrice / bound).toFixed(2)}×): the requests priced at the catalog's best $/vCPU or $/GiB, whichever is more`,
  ];

  await Promise.all(
    WORKLOADS.map((w) =>
      context.apps
        .deleteNamespacedDeployment({ namespace, name: `${w.name}-${runId}` })
        .catch(() => undefined),
    ),
  );
  await deleteNodeClaims(context, claimNames, patience(stack));
  await objects.nodePools.delete(nodePool.metadata.name);
  await objects.nodeClasses.delete(nodeClass.metadata.name);
  return {
    invariants,
    summary,
    marks,
    figures: {
      pods: POD_COUNT,
      windows,
      nodeClaims: claims.length,
      firstPendingToNodeClaimMs: provisioningMs,
      allRunningMs: allRunningAt - started,
      vcpusLaunched: vcpus,
      launchedPricePerHour: Number(launchedPrice.toFixed(4)),
      lowerBoundPricePerHour: Number(bound.toFixed(4)),
    },
  };
}

function instanceTypeOf(recorder: ScenarioContext['recorder'], nodeName: string | undefined): string {
  return recorder.nodes.get(nodeName ?? '')?.metadata.labels?.[WellKnown.instanceTypeLabel] ?? '?';
}

/**
 * What no packing can beat: the requested vCPUs at the catalog's lowest price per vCPU, or the requested
 * memory at its lowest price per GiB, whichever is higher (a VM's price pays for both at once).
 */
function lowerBound(offerings: readonly Offering[], book: PriceBook, cpu: number, gib: number): number {
  let perCpu = Infinity;
  let perGiB = Infinity;
  for (const offering of offerings) {
    const price = priceOf(book, offering.vmSize, 'on-demand');
    if (price === undefined) continue;
    perCpu = Math.min(perCpu, price / offering.cpu);
    perGiB = Math.min(perGiB, price / (offering.memoryMiB / 1024));
  }
  return Math.max(cpu * perCpu, gib * perGiB);
}

function gibibytes(text: string): number {
  return text.endsWith('Gi') ? Number(text.slice(0, -2)) : Number(text.slice(0, -2)) / 1024;
}

function cpuCores(text: string): number {
  return text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
}

function summarize(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([value, count]) => `${count} × ${value}`).join(', ');
}
