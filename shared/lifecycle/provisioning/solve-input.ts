// The scheduling simulation's input from what a window read: the adapter from client-node's objects to
// the simulation's plain data. No I/O; the instance types (catalog, prices, unavailable offerings) are
// handed in per AKSNodeClass.
import type {
  V1DaemonSet,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
} from '@kubernetes/client-node';
import type {
  BoundPod,
  DaemonSet,
  ExistingNode,
  InstanceType,
  SchedulingInput,
  SchedulingNodePool,
  SchedulingPod,
  SchedulingPodSpec,
  SchedulingPolicies,
} from '../../decisions/scheduling/index.js';
import { KnownEphemeralTaintKeys } from '../../decisions/initialization.js';
import { labelsMatch } from '../../decisions/label-selector.js';
import { isManagedNodePool } from '../../decisions/ownership.js';
import { tryParseQuantity } from '../../decisions/quantity.js';
import type { AKSNodeClass } from '../../models/aks-node-class.js';
import { ConditionTypes, WellKnown, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import type { Node, NodeSelectorRequirement, ResourceList, Taint } from '../../models/kube.js';
import type { ProvisioningState } from './cluster-state.js';

export interface SolveInputOptions {
  /** The instance types an AKSNodeClass can launch (allocatable depends on its maxPods and disk). */
  instanceTypesFor: (nodeClass: AKSNodeClass) => InstanceType[];
  /** Only pods, and NodePools whose template labels, match this label selector. */
  selector?: string;
  /** A NodePool's instance types with its NodeOverlays applied (node-overlays.ts); as they are without. */
  overlaid?: (nodePoolName: string, instanceTypes: InstanceType[]) => InstanceType[];
  /** PREFERENCE_POLICY and MIN_VALUES_POLICY (settings.scheduling), for the solve. */
  policies: SchedulingPolicies;
}

export function solveInput(state: ProvisioningState, options: SolveInputOptions): SchedulingInput {
  const nodeClasses = new Map(state.nodeClasses.map((c) => [c.metadata.name, c]));
  const instanceTypesByClass = new Map<string, InstanceType[]>();
  const instanceTypesOf = (nodeClass: AKSNodeClass): InstanceType[] => {
    let types = instanceTypesByClass.get(nodeClass.metadata.name);
    if (!types) {
      types = options.instanceTypesFor(nodeClass);
      instanceTypesByClass.set(nodeClass.metadata.name, types);
    }
    return types;
  };
  const nodePools: SchedulingNodePool[] = [];
  const typesByPool = new Map<string, Map<string, InstanceType>>();
  for (const nodePool of state.nodePools) {
    if (!isProvisioningNodePool(nodePool)) continue;
    if (options.selector && !labelsMatch(options.selector, templateLabels(nodePool))) continue;
    const classRef = nodePool.spec.template.spec.nodeClassRef.name;
    const nodeClass = nodeClasses.get(classRef);
    if (!nodeClass || nodeClass.metadata.deletionTimestamp) {
      // Still asked, with no instance types: every pod is told this NodePool cannot launch, and why.
      nodePools.push({
        name: nodePool.metadata.name,
        ...(nodePool.spec.weight !== undefined && { weight: nodePool.spec.weight }),
        requirements: [],
        instanceTypes: [],
        notReady: nodeClass
          ? `its node class "${classRef}" is being deleted`
          : `its node class "${classRef}" does not exist`,
      });
      continue;
    }
    const classTypes = instanceTypesOf(nodeClass);
    const instanceTypes = options.overlaid?.(nodePool.metadata.name, classTypes) ?? classTypes;
    typesByPool.set(nodePool.metadata.name, new Map(instanceTypes.map((t) => [t.name, t])));
    const template = nodePool.spec.template;
    nodePools.push({
      name: nodePool.metadata.name,
      ...(nodePool.spec.weight !== undefined && { weight: nodePool.spec.weight }),
      requirements: template.spec.requirements,
      labels: { ...template.metadata?.labels },
      ...(template.spec.taints && { taints: template.spec.taints }),
      ...(template.spec.startupTaints && { startupTaints: template.spec.startupTaints }),
      ...(nodePool.spec.limits && {
        limits: nodePool.spec.limits,
        usage: nodePoolUsage(nodePool.metadata.name, state.nodeClaims, instanceTypes),
      }),
      instanceTypes,
    });
  }

  const volumes = volumeIndex(state.volumes);
  const claimsByNode = new Map<string, NodeClaim>();
  for (const claim of state.nodeClaims) {
    if (claim.status?.nodeName) claimsByNode.set(claim.status.nodeName, claim);
  }
  const existingNodes: ExistingNode[] = [];
  for (const node of state.nodes) {
    if (node.metadata.deletionTimestamp || node.spec.unschedulable) continue;
    existingNodes.push(existingNode(node, claimsByNode.get(node.metadata.name), state.boundPods));
  }
  const knownTypes = new Map<string, InstanceType>();
  for (const types of instanceTypesByClass.values()) for (const t of types) knownTypes.set(t.name, t);
  for (const claim of state.nodeClaims) {
    const poolTypes = typesByPool.get(claim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '');
    const inFlight = inFlightNodeClaim(claim, poolTypes ?? knownTypes);
    if (inFlight) existingNodes.push(inFlight);
  }

  return {
    pods: state.pendingPods
      .filter((pod) => !options.selector || labelsMatch(options.selector, pod.metadata?.labels ?? {}))
      .map((pod) => schedulingPod(pod, volumes)),
    nodePools,
    existingNodes,
    daemonSets: state.daemonSets.map(daemonSet),
    options: { ...options.policies },
  };
}

/** NodePools Karpenter provisions for: ours (AKSNodeClass), dynamic (no replicas), not being deleted. */
function isProvisioningNodePool(nodePool: NodePool): boolean {
  return (
    isManagedNodePool(nodePool) &&
    nodePool.spec.replicas === undefined &&
    !nodePool.metadata.deletionTimestamp
  );
}

function templateLabels(nodePool: NodePool): Record<string, string> {
  return { ...nodePool.spec.template.metadata?.labels, [WellKnown.nodePoolLabel]: nodePool.metadata.name };
}

export function schedulingPod(pod: V1Pod, volumes?: VolumeIndex): SchedulingPod {
  const metadata = pod.metadata ?? {};
  const created = metadata.creationTimestamp;
  const volumeRequirements = volumes ? volumeRequirementsOf(pod, volumes) : [];
  return {
    metadata: {
      name: metadata.name ?? '',
      namespace: metadata.namespace ?? 'default',
      uid: metadata.uid ?? '',
      ...(metadata.labels && { labels: metadata.labels }),
      ...(created && { creationTimestamp: new Date(created).toISOString() }),
    },
    // client-node's V1PodSpec spells every field the simulation reads as Kubernetes does; quantities
    // stay strings.
    spec: (pod.spec ?? { containers: [] }) as unknown as SchedulingPodSpec,
    ...(volumeRequirements.length > 0 && { volumeRequirements }),
  };
}

/** PersistentVolumeClaims by `namespace/name`, and PersistentVolumes by name. */
export interface VolumeIndex {
  claims: Map<string, V1PersistentVolumeClaim>;
  volumes: Map<string, V1PersistentVolume>;
}

function volumeIndex(listed: ProvisioningState['volumes']): VolumeIndex | undefined {
  if (!listed) return undefined;
  return {
    claims: new Map(listed.claims.map((c) => [`${c.metadata?.namespace}/${c.metadata?.name}`, c])),
    volumes: new Map(listed.volumes.map((v) => [v.metadata?.name ?? '', v])),
  };
}

/** Azure Disk's CSI driver writes its own zone key on the volumes it creates; nodes carry the standard one. */
const VOLUME_ZONE_KEYS: ReadonlySet<string> = new Set([
  'topology.disk.csi.azure.com/zone',
  'failure-domain.beta.kubernetes.io/zone',
]);

/**
 * What a pod's bound volumes require of a node, as Karpenter's VolumeTopology reads it: per claim bound to
 * a PersistentVolume, the first term of the volume's required node affinity. A claim not bound yet
 * (WaitForFirstConsumer) binds where the pod lands, so it requires nothing.
 */
export function volumeRequirementsOf(pod: V1Pod, index: VolumeIndex): NodeSelectorRequirement[] {
  const namespace = pod.metadata?.namespace ?? 'default';
  const requirements: NodeSelectorRequirement[] = [];
  for (const volume of pod.spec?.volumes ?? []) {
    const claimName = volume.persistentVolumeClaim?.claimName;
    if (!claimName) continue;
    const bound = index.claims.get(`${namespace}/${claimName}`)?.spec?.volumeName;
    const term = bound
      ? index.volumes.get(bound)?.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]
      : undefined;
    for (const expression of term?.matchExpressions ?? []) {
      const key = VOLUME_ZONE_KEYS.has(expression.key) ? WellKnown.zoneLabel : expression.key;
      requirements.push({
        key,
        operator: expression.operator as NodeSelectorRequirement['operator'],
        ...(expression.values && { values: expression.values }),
      });
    }
  }
  return requirements;
}

function boundPod(pod: V1Pod): BoundPod {
  const owner = pod.metadata?.ownerReferences?.find((o) => o.controller && o.kind === 'DaemonSet');
  return {
    namespace: pod.metadata?.namespace ?? 'default',
    ...(pod.metadata?.name && { name: pod.metadata.name }),
    ...(pod.metadata?.labels && { labels: pod.metadata.labels }),
    spec: (pod.spec ?? { containers: [] }) as unknown as SchedulingPodSpec,
    ...(owner && { daemonSet: `${pod.metadata?.namespace ?? 'default'}/${owner.name}` }),
  };
}

function existingNode(
  node: Node,
  claim: NodeClaim | undefined,
  boundPods: Map<string, V1Pod[]>,
): ExistingNode {
  const labels = node.metadata.labels ?? {};
  const nodePoolName = labels[WellKnown.nodePoolLabel];
  const initialized = nodePoolName === undefined || labels[WellKnown.initializedLabel] === 'true';
  const startupTaints = claim?.spec.startupTaints ?? [];
  const taints = initialized
    ? (node.spec.taints ?? [])
    : withoutEphemeral(node.spec.taints ?? [], startupTaints);
  return {
    name: node.metadata.name,
    kind: 'Node',
    ...(nodePoolName !== undefined && { nodePoolName }),
    labels,
    taints,
    allocatable: node.status?.allocatable ?? {},
    pods: (boundPods.get(node.metadata.name) ?? []).map(boundPod),
    initialized,
    ...(startupTaints.length > 0 && { startupTaints }),
  };
}

/**
 * A NodeClaim without a Node yet takes pods as Karpenter's in-flight state node does: labels from its
 * single-valued requirements and metadata, taints from its spec (startup taints do not repel), and its
 * allocatable from the status once launched. Before launch the smallest of its instance types stands in:
 * every one of them fits the pods it was created for, so those pods land on it again, and nothing larger
 * is promised than any machine launch may pick.
 */
function inFlightNodeClaim(
  claim: NodeClaim,
  knownTypes: Map<string, InstanceType>,
): ExistingNode | undefined {
  if (claim.status?.nodeName || claim.metadata.deletionTimestamp) return undefined;
  const launched = claim.status?.conditions?.find((c) => c.type === ConditionTypes.launched);
  if (launched?.status === 'False') return undefined;
  const launchedAs = knownTypes.get(claim.metadata.labels?.[WellKnown.instanceTypeLabel] ?? '');
  const allocatable = claim.status?.allocatable
    ? // The VM reports what Azure knows; extended resources an overlay promised arrive with the device
      // plugin, so until the Node exists the claim is taken to offer what its instance type was planned with.
      { ...launchedAs?.allocatable, ...claim.status.allocatable }
    : smallestAllocatable(claim, knownTypes);
  if (!allocatable) return undefined;
  const labels: Record<string, string> = {};
  for (const requirement of claim.spec.requirements) {
    if (requirement.operator === 'In' && requirement.values?.length === 1)
      labels[requirement.key] = requirement.values[0]!;
  }
  Object.assign(labels, claim.metadata.labels);
  const nodePoolName = claim.metadata.labels?.[WellKnown.nodePoolLabel];
  return {
    name: claim.metadata.name,
    kind: 'NodeClaim',
    ...(nodePoolName !== undefined && { nodePoolName }),
    labels,
    taints: claim.spec.taints ?? [],
    allocatable,
    initialized: false,
  };
}

function instanceTypeOptions(claim: NodeClaim, knownTypes: Map<string, InstanceType>): InstanceType[] {
  const names = claim.spec.requirements.find(
    (r) => r.key === WellKnown.instanceTypeLabel && r.operator === 'In',
  )?.values;
  return (names ?? []).map((name) => knownTypes.get(name)).filter((t): t is InstanceType => t !== undefined);
}

function smallestAllocatable(
  claim: NodeClaim,
  knownTypes: Map<string, InstanceType>,
): ResourceList | undefined {
  const options = instanceTypeOptions(claim, knownTypes);
  if (options.length === 0) return undefined;
  const result: ResourceList = {};
  for (const name of Object.keys(options[0]!.allocatable)) {
    let smallest: { text: string; value: number } | undefined;
    for (const option of options) {
      const text = option.allocatable[name];
      if (text === undefined) continue;
      const value = tryParseQuantity(text);
      if (value === undefined) continue;
      if (smallest === undefined || value < smallest.value) smallest = { text, value };
    }
    if (smallest) result[name] = smallest.text;
  }
  return result;
}

/**
 * What a NodePool uses against its limits: its NodeClaims' capacity, or, for one not yet launched, the
 * largest of its instance types (Karpenter subtracts pessimistically), and one node each.
 */
export function nodePoolUsage(
  nodePoolName: string,
  nodeClaims: readonly NodeClaim[],
  instanceTypes: readonly InstanceType[],
): ResourceList {
  const byName = new Map(instanceTypes.map((t) => [t.name, t]));
  const totals = new Map<string, number>([['nodes', 0]]);
  for (const claim of nodeClaims) {
    if (claim.metadata.labels?.[WellKnown.nodePoolLabel] !== nodePoolName) continue;
    totals.set('nodes', (totals.get('nodes') ?? 0) + 1);
    const capacity = claim.status?.capacity ?? largestCapacity(instanceTypeOptions(claim, byName));
    for (const [name, text] of Object.entries(capacity)) {
      totals.set(name, (totals.get(name) ?? 0) + (tryParseQuantity(text) ?? 0));
    }
  }
  return Object.fromEntries([...totals].map(([name, value]) => [name, String(value)]));
}

function largestCapacity(options: readonly InstanceType[]): ResourceList {
  const largest = new Map<string, number>();
  for (const option of options) {
    for (const [name, text] of Object.entries(option.capacity)) {
      largest.set(name, Math.max(largest.get(name) ?? 0, tryParseQuantity(text) ?? 0));
    }
  }
  return Object.fromEntries([...largest].map(([name, value]) => [name, String(value)]));
}

/**
 * Karpenter ignores the taints a node carries only until it is up on managed nodes that are not yet
 * initialized (KS statenode.go), so pods waiting for a new node are not provisioned a second time.
 */
function withoutEphemeral(taints: readonly Taint[], startupTaints: readonly Taint[]): Taint[] {
  return taints.filter(
    (t) =>
      !KnownEphemeralTaintKeys.includes(t.key) &&
      !startupTaints.some(
        (s) => s.key === t.key && s.effect === t.effect && (s.value ?? '') === (t.value ?? ''),
      ),
  );
}

function daemonSet(ds: V1DaemonSet): DaemonSet {
  const template = ds.spec?.template;
  return {
    name: `${ds.metadata?.namespace ?? 'default'}/${ds.metadata?.name ?? ''}`,
    template: {
      ...(template?.metadata?.labels && { labels: template.metadata.labels }),
      spec: (template?.spec ?? { containers: [] }) as unknown as SchedulingPodSpec,
    },
  };
}
