// The Underutilized decision's input from what the sweep (or a validating command) read: the candidates
// with their prices and pods, the NodePool with its instance types, every other Ready node that is not
// disrupting as a place pods can go, and the pending pods. Conversion only; the deciding is
// decisions/consolidation/. The instance types are the ones launch would choose from now: the region's
// offerings sized for the NodePool's AKSNodeClass, priced by the book launch orders by, and without the
// offerings the unavailable-offerings table blocks (launch failures, quota), so consolidation never
// decides a replacement that launch would refuse. Without its AKSNodeClass a NodePool cannot launch at
// all, and its candidates can only be deleted. Under policy Balanced the input carries the NodePool's
// totals (every node's price and disruption cost) that each move is scored against. Nodes still within their
// NodePool's consolidateAfter are named, so the simulation moves no pods onto them.
import type { Candidate } from '../../decisions/consolidation/candidates.js';
import {
  BALANCED_K,
  nodeDisruptionCost,
  podEvictionCost,
  type PoolTotals,
} from '../../decisions/consolidation/balanced.js';
import {
  isMirrorPod,
  isOwnedByDaemonSet,
  isTerminal,
  type ConsolidationPod,
} from '../../decisions/consolidation/pods.js';
import type {
  UnderutilizedCandidate,
  UnderutilizedInput,
} from '../../decisions/consolidation/underutilized.js';
import { isUnderConsolidateAfter } from '../../decisions/consolidation/timing.js';
import { isDisrupting, isNodeNotReady } from '../../decisions/disruption-state.js';
import { isConditionTrue } from '../../decisions/conditions.js';
import { priceOf } from '../../decisions/prices/price-book.js';
import { instanceTypesFromOfferings } from '../../decisions/scheduling/catalog-instance-types.js';
import type { ExistingNode, SchedulingNodePool, SchedulingPod } from '../../decisions/scheduling/types.js';
import {
  ConditionTypes,
  WellKnown,
  type CapacityType,
  type NodeClaim,
  type NodePool,
} from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { overlaidInstanceTypes, overlaidOfferingPrice } from '../../decisions/node-overlays.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { providerIdKey, type SweepView } from '../cluster/snapshot.js';
import type { ClusterPods } from './cluster-pods.js';
import { boundPodsOf } from '../../decisions/consolidation/pods.js';

function schedulingPodOf(pod: ConsolidationPod): SchedulingPod {
  return {
    metadata: {
      name: pod.name,
      namespace: pod.namespace,
      uid: pod.uid,
      labels: { ...pod.labels },
      ...(pod.creationTimestamp ? { creationTimestamp: pod.creationTimestamp } : {}),
    },
    spec: pod.spec ?? { containers: [] },
    ...(pod.phase ? { status: { phase: pod.phase } } : {}),
  };
}

export interface UnderutilizedContext {
  nodePool: NodePool;
  /**
   * Every Node the sweep knows, with the NodeClaim that owns it and that NodeClaim's NodePool (undefined
   * for unmanaged nodes).
   */
  nodes: readonly { node: Node; nodeClaim?: NodeClaim; nodePool?: NodePool }[];
  pods: ClusterPods;
  allowed: number;
  spotToSpot: boolean;
  deadline?: number;
}

/**
 * Every Node of the view with the NodeClaim that owns it (matched by providerID) and its NodePool, as the
 * context wants.
 */
export function nodesWithNodeClaims(view: SweepView): UnderutilizedContext['nodes'] {
  const claimByProviderId = new Map(
    view
      .nodeClaims()
      .flatMap((c) => (c.status?.providerID ? [[providerIdKey(c.status.providerID), c] as const] : [])),
  );
  const poolByName = new Map(view.snapshot.nodePools.map((p) => [p.metadata.name, p]));
  return view.snapshot.nodes.map((node) => {
    const nodeClaim = node.spec.providerID
      ? claimByProviderId.get(providerIdKey(node.spec.providerID))
      : undefined;
    const nodePool = poolByName.get(nodeClaim?.metadata.labels?.[WellKnown.nodePoolLabel] ?? '');
    return { node, ...(nodeClaim ? { nodeClaim } : {}), ...(nodePool ? { nodePool } : {}) };
  });
}

/** Nodes a command may not move pods onto yet: still within their NodePool's consolidateAfter. */
function settlingNodesOf(context: UnderutilizedContext, now: Date): Set<string> {
  const settling = new Set<string>();
  for (const { node, nodeClaim, nodePool } of context.nodes) {
    if (nodeClaim && nodePool && isUnderConsolidateAfter(nodeClaim, nodePool, now))
      settling.add(node.metadata.name);
  }
  return settling;
}

export async function underutilizedInput(
  deps: LifecycleDependencies,
  candidates: readonly Candidate[],
  context: UnderutilizedContext,
): Promise<UnderutilizedInput> {
  // The book launch orders offerings by, so a replacement judged cheaper here is priced as launch sees it.
  const prices = deps.cloud.prices();
  const template = context.nodePool.spec.template;
  const poolName = context.nodePool.metadata.name;
  // NodeOverlays price the replacements and the candidates as provisioning and launch price them.
  const [offerings, unavailable, nodeClass, overlays] = await Promise.all([
    // With the reserved offerings that have a free slot, so a node may move onto a freed reservation.
    deps.cloud.offerings(),
    deps.cloud.unavailableOfferings(),
    deps.objects.nodeClasses.get(template.spec.nodeClassRef.name),
    deps.cloud.nodeOverlays(),
  ]);
  const blocks = unavailable;
  const instanceTypesWith = (blocked: typeof blocks) => {
    if (!nodeClass || nodeClass.metadata.deletionTimestamp) return [];
    const types = instanceTypesFromOfferings(offerings, {
      ...deps.cloud.capacityOptions(nodeClass),
      unavailable: blocked,
      priceOf: (vmSize, capacityType) => priceOf(prices, vmSize, capacityType),
    });
    return overlays ? overlaidInstanceTypes(overlays, poolName, types) : types;
  };
  const poolWith = (instanceTypes: SchedulingNodePool['instanceTypes']): SchedulingNodePool => ({
    name: poolName,
    requirements: template.spec.requirements,
    labels: { ...template.metadata?.labels, [WellKnown.nodePoolLabel]: poolName },
    ...(template.spec.taints ? { taints: template.spec.taints } : {}),
    ...(template.spec.startupTaints ? { startupTaints: template.spec.startupTaints } : {}),
    instanceTypes,
  });
  const pool = poolWith(instanceTypesWith(blocks));
  const existingNodes: ExistingNode[] = context.nodes
    .filter(({ node, nodeClaim }) => !isNodeNotReady(node) && !(nodeClaim && isDisrupting(nodeClaim, [node])))
    .map(({ node, nodeClaim }) => ({
      name: node.metadata.name,
      kind: 'Node',
      ...(nodeClaim?.metadata.labels?.[WellKnown.nodePoolLabel]
        ? { nodePoolName: nodeClaim.metadata.labels[WellKnown.nodePoolLabel] }
        : {}),
      labels: node.metadata.labels ?? {},
      ...(node.spec.taints ? { taints: node.spec.taints } : {}),
      allocatable: node.status?.allocatable ?? {},
      pods: boundPodsOf(context.pods.byNode.get(node.metadata.name) ?? []),
      initialized: !nodeClaim || isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.initialized),
    }));
  const offeringOf = (node: Node | undefined) => {
    const labels = node?.metadata.labels ?? {};
    const instanceType = labels[WellKnown.instanceTypeLabel] ?? '';
    const capacityType = (labels[WellKnown.capacityTypeLabel] ?? 'on-demand') as CapacityType;
    const listed = priceOf(prices, instanceType, capacityType);
    const offering = { vmSize: instanceType, zone: labels[WellKnown.zoneLabel] ?? '', capacityType };
    const price = overlays ? overlaidOfferingPrice(overlays, poolName, offering, listed) : listed;
    return { instanceType, capacityType, price };
  };
  const priced = (c: Candidate): UnderutilizedCandidate => {
    const { instanceType, capacityType, price } = offeringOf(c.input.node);
    return {
      name: c.name,
      nodeName: c.input.node?.metadata.name ?? '',
      price: price ?? Infinity,
      capacityType,
      instanceType,
      pods: c.reschedulable.map(schedulingPodOf),
      disruptionCost: nodeDisruptionCost(c.reschedulable.map(podEvictionCost)),
    };
  };
  const policy = context.nodePool.spec.disruption?.consolidationPolicy;
  const balanced =
    policy === 'Balanced' ? { totals: poolTotals(context, offeringOf), k: BALANCED_K } : undefined;
  return {
    candidates: candidates.map(priced),
    cluster: { nodePools: [pool], existingNodes, options: { ...deps.settings.scheduling } },
    // Only to say why a candidate is not consolidated: what it would be replaced by were nothing blocked.
    ...(blocks.length > 0 ? { unblockedNodePools: [poolWith(instanceTypesWith([]))] } : {}),
    pendingPods: context.pods.pending.map(schedulingPodOf),
    settlingNodes: settlingNodesOf(context, deps.now()),
    allowed: context.allowed,
    spotToSpot: context.spotToSpot,
    ...(balanced ? { balanced } : {}),
    ...(context.deadline !== undefined ? { deadline: context.deadline } : {}),
  };
}

/**
 * Every node of the NodePool, candidate or not (upstream: non-candidates still count in the denominators):
 * their prices (a node without a known price adds nothing) and disruption costs (1 per node, plus the
 * eviction cost of each pod that would be evicted: not DaemonSet, mirror or finished pods).
 */
function poolTotals(
  context: UnderutilizedContext,
  offeringOf: (node: Node | undefined) => { price: number | undefined },
): PoolTotals {
  let totalCost = 0;
  let totalDisruptionCost = 0;
  for (const { node, nodeClaim } of context.nodes) {
    if (nodeClaim?.metadata.labels?.[WellKnown.nodePoolLabel] !== context.nodePool.metadata.name) continue;
    totalCost += offeringOf(node).price ?? 0;
    const evicted = (context.pods.byNode.get(node.metadata.name) ?? []).filter(
      (p) => !isOwnedByDaemonSet(p) && !isMirrorPod(p) && !isTerminal(p),
    );
    totalDisruptionCost += nodeDisruptionCost(evicted.map(podEvictionCost));
  }
  return { totalCost, totalDisruptionCost };
}
