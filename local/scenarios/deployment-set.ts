// The Deployment set the pod scenarios share: three Deployments of different requests, each spread across
// zones with maxSkew 1, on a dynamic NodePool of D-family on-demand sizes; and what the scenarios compute
// from it (prices of the launched sizes, the lower bound no packing can beat, short summaries).
import type { V1Container, V1Deployment, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import type { Offering } from '../../shared/decisions/offerings.js';
import { priceOf, type PriceBook } from '../../shared/decisions/prices/price-book.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../shared/models/index.js';
import { RUN_LABEL } from '../stack/local-stack.js';
import type { PodView, Recorder } from '../view/recorder.js';
import { priceLowerBound, type PricedSize } from './price-lower-bound.js';
import { agentStartupTaint, onDemandDFamily, type ScenarioContext } from './scenario.js';

export interface Workload {
  name: string;
  replicas: number;
  cpu: string;
  memory: string;
}

export const WORKLOADS: readonly Workload[] = [
  { name: 'small', replicas: 20, cpu: '250m', memory: '512Mi' },
  { name: 'medium', replicas: 20, cpu: '500m', memory: '1Gi' },
  { name: 'large', replicas: 20, cpu: '1', memory: '2Gi' },
];
export const POD_COUNT = WORKLOADS.reduce((sum, w) => sum + w.replicas, 0);

export const describeWorkloads = (): string =>
  WORKLOADS.map((w) => `${w.replicas} × ${w.cpu} CPU / ${w.memory}`).join(', ');

export const deploymentName = (workload: Workload, runId: string): string => `${workload.name}-${runId}`;

export function dynamicNodePool(
  name: string,
  runId: string,
  disruption: NonNullable<NodePool['spec']['disruption']> = {
    consolidateAfter: 'Never',
    budgets: [{ nodes: '10%' }],
  },
): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: { [RUN_LABEL]: runId } },
    spec: {
      disruption,
      limits: { cpu: '200' },
      template: {
        metadata: { labels: { [RUN_LABEL]: runId } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name },
          startupTaints: [agentStartupTaint],
          expireAfter: 'Never',
          requirements: onDemandDFamily(9),
        },
      },
    },
  };
}

export const workloadLabels = (workload: Workload, runId: string): Record<string, string> => ({
  app: deploymentName(workload, runId),
  [RUN_LABEL]: runId,
});

function deployment(workload: Workload, runId: string, nodePool: string): V1Deployment {
  const labels = workloadLabels(workload, runId);
  return {
    metadata: { name: deploymentName(workload, runId) },
    spec: {
      replicas: workload.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          terminationGracePeriodSeconds: 1,
          // Only the scenario's own NodePool: e2e files share one control plane and play at the same time.
          nodeSelector: { [WellKnown.nodePoolLabel]: nodePool },
          topologySpreadConstraints: [zoneSpread(labels)],
          containers: [pauseContainer(workload)],
        },
      },
    },
  };
}

/** A DoNotSchedule spread of the pods with these labels across zones, maxSkew 1. */
export function zoneSpread(labels: Record<string, string>): V1TopologySpreadConstraint {
  return {
    maxSkew: 1,
    topologyKey: WellKnown.zoneLabel,
    whenUnsatisfiable: 'DoNotSchedule',
    labelSelector: { matchLabels: labels },
  };
}

/** The pods' one container: pause, with the workload's requests. */
export function pauseContainer(requests: { cpu: string; memory: string }): V1Container {
  return {
    name: 'app',
    image: 'registry.k8s.io/pause:3.10',
    resources: { requests: { cpu: requests.cpu, memory: requests.memory } },
  };
}

export async function createDeployments(context: ScenarioContext, nodePool: string): Promise<void> {
  for (const workload of WORKLOADS) {
    await context.apps.createNamespacedDeployment({
      namespace: context.namespace,
      body: deployment(workload, context.runId, nodePool),
    });
  }
}

export async function deleteDeployments(context: ScenarioContext): Promise<void> {
  await Promise.all(
    WORKLOADS.map((w) =>
      context.apps
        .deleteNamespacedDeployment({ namespace: context.namespace, name: deploymentName(w, context.runId) })
        .catch(() => undefined),
    ),
  );
}

/** The recorded pods that are Running and not being deleted, once there are at least `count`. */
export function runningPods(recorder: Recorder, count: number): PodView[] | undefined {
  const running = [...recorder.pods.values()].filter(
    (p) => !p.metadata.deletionTimestamp && p.status?.phase === 'Running',
  );
  return running.length >= count ? running : undefined;
}

export function instanceTypeOf(recorder: Recorder, claim: NodeClaim): string {
  return (
    claim.metadata.labels?.[WellKnown.instanceTypeLabel] ??
    recorder.nodes.get(claim.status?.nodeName ?? '')?.metadata.labels?.[WellKnown.instanceTypeLabel] ??
    '?'
  );
}

/** The on-demand hourly price of these sizes (NaN when one has no price). */
export function hourlyPrice(book: PriceBook, sizes: readonly string[]): number {
  return sizes.reduce((sum, size) => sum + (priceOf(book, size, 'on-demand') ?? NaN), 0);
}

/**
 * What no packing can beat (price-lower-bound.ts): the requested vCPUs at the catalog's lowest price per
 * vCPU, or the requested memory at its lowest price per GiB, whichever is higher, and no less than the
 * cheapest `nodes` nodes that hold the requests between them (when hostname constraints force that many).
 */
export function lowerBound(
  offerings: readonly Offering[],
  book: PriceBook,
  demand: { cpu: number; gib: number; nodes: number },
): number {
  const sizes: PricedSize[] = [];
  const seen = new Set<string>();
  for (const offering of offerings) {
    const price = priceOf(book, offering.vmSize, 'on-demand');
    if (price === undefined || seen.has(offering.vmSize)) continue;
    seen.add(offering.vmSize);
    sizes.push({ price, cpu: offering.cpu, memoryGiB: offering.memoryMiB / 1024 });
  }
  return priceLowerBound(sizes, { cpu: demand.cpu, memoryGiB: demand.gib, nodes: demand.nodes });
}

export function gibibytes(text: string): number {
  return text.endsWith('Gi') ? Number(text.slice(0, -2)) : Number(text.slice(0, -2)) / 1024;
}

export function cpuCores(text: string): number {
  return text.endsWith('m') ? Number(text.slice(0, -1)) / 1000 : Number(text);
}

/** "3 × Standard_D2s_v5, 1 × Standard_D4s_v5" */
export function summarize(values: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].map(([value, count]) => `${count} × ${value}`).join(', ');
}
