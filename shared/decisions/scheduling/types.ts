// The scheduling simulation's public input and output: plain data, no client-library types, so the
// caller (the provisioning orchestration) converts what it listed and this folder stays pure.
//
// Shapes follow Kubernetes' own field names (a pod is a subset of v1.Pod) so a caller can pass the
// objects it read without renaming fields; only what the simulation reads is declared.
import type { NodeSelectorRequirement, ResourceList, Taint } from '../../models/kube.js';
import type { CapacityType } from '../../models/karpenter.js';
import type { PodExclusion } from '../explain/decision-record.js';

// ---------------------------------------------------------------------------------------------------
// Pods as the scheduler sees them

export interface ContainerPort {
  containerPort?: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: string;
}

export interface SchedulingContainer {
  name?: string;
  resources?: { requests?: ResourceList; limits?: ResourceList };
  ports?: ContainerPort[];
  /** "Always" on an init container makes it a restartable (sidecar) container. */
  restartPolicy?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal';
  value?: string;
  effect?: Taint['effect'] | '';
  tolerationSeconds?: number;
}

export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  /** Karpenter rejects pods that use matchFields; so does this simulation. */
  matchFields?: NodeSelectorRequirement[];
}

export interface PreferredSchedulingTerm {
  weight: number;
  preference: NodeSelectorTerm;
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  /** With namespaceSelector absent too: the pod's own namespace. */
  namespaces?: string[];
  /** Namespaces whose labels it selects (SchedulingInput.namespaces), in addition to `namespaces`. */
  namespaceSelector?: LabelSelector;
  topologyKey: string;
}

export interface WeightedPodAffinityTerm {
  weight: number;
  podAffinityTerm: PodAffinityTerm;
}

export interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
    preferredDuringSchedulingIgnoredDuringExecution?: PreferredSchedulingTerm[];
  };
  podAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
  };
  podAntiAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
  };
}

export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: 'DoNotSchedule' | 'ScheduleAnyway';
  labelSelector?: LabelSelector;
  minDomains?: number;
  /** Honor (default): only domains of nodes matching the pod's node affinity count. */
  nodeAffinityPolicy?: 'Honor' | 'Ignore';
  /** Ignore (default): node taints do not exclude domains. */
  nodeTaintsPolicy?: 'Honor' | 'Ignore';
  matchLabelKeys?: string[];
}

export interface SchedulingPodSpec {
  containers: SchedulingContainer[];
  initContainers?: SchedulingContainer[];
  overhead?: ResourceList;
  nodeSelector?: Record<string, string>;
  affinity?: Affinity;
  tolerations?: Toleration[];
  topologySpreadConstraints?: TopologySpreadConstraint[];
}

export interface SchedulingPod {
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    labels?: Record<string, string>;
    /** RFC 3339; orders pods of equal size oldest first, as Karpenter's queue does. */
    creationTimestamp?: string;
  };
  spec: SchedulingPodSpec;
  /** status.phase; only a consolidation simulation reads it (a Pending pod may go anywhere). */
  status?: { phase?: string };
  /**
   * What the pod's bound volumes require of a node (their PersistentVolumes' node affinity, in practice
   * a zone), computed by the caller. Required like the pod's own node affinity; kept apart so a NodePool
   * ruled out by them is reported as VolumeZone rather than as the pod's own requirement.
   */
  volumeRequirements?: NodeSelectorRequirement[];
}

// ---------------------------------------------------------------------------------------------------
// What pods may land on

export interface InstanceTypeOffering {
  /** Zone label value ("westus2-1"); "" in a region without availability zones. */
  zone: string;
  capacityType: CapacityType;
  /** USD per hour; Infinity when unknown (sorted last, never chosen over a priced option). */
  price: number;
  /** False when recent launch failures or quota rule the offering out. */
  available: boolean;
}

export interface InstanceType {
  /** The VM size, also the node.kubernetes.io/instance-type label value. */
  name: string;
  /**
   * Single-valued node labels a machine of this type carries (instance-type, arch, os, region,
   * karpenter.azure.com/sku-*). Zone and capacity type come from the offerings instead.
   */
  labels: Record<string, string>;
  capacity: ResourceList;
  /** Capacity minus kube-reserved, system-reserved and eviction thresholds. */
  allocatable: ResourceList;
  offerings: InstanceTypeOffering[];
}

export interface SchedulingNodePool {
  name: string;
  /** Higher first; ties by name descending, as Karpenter orders NodePools. */
  weight?: number;
  /** The template's spec.requirements. */
  requirements: NodeSelectorRequirement[];
  /** The template's metadata.labels (become node labels; pods may select them). */
  labels?: Record<string, string>;
  taints?: Taint[];
  /** Taints removed once the node is initialized: they do not repel pods (Karpenter ignores them). */
  startupTaints?: Taint[];
  /** spec.limits (cpu, memory, nodes, …); absent means unlimited. */
  limits?: ResourceList;
  /** What the NodePool already uses against its limits: the capacity of its nodes (status.resources). */
  usage?: ResourceList;
  /** The instance types this NodePool's NodeClass can launch (allocatable depends on the NodeClass). */
  instanceTypes: InstanceType[];
  /**
   * Why this NodePool cannot launch at all (its node class is missing or being deleted): it is still
   * asked, so every pod is told that this NodePool was ruled out and why.
   */
  notReady?: string;
}

/** A pod already bound (or nominated) to a node; counted for resources, host ports and topology. */
export interface BoundPod {
  namespace: string;
  name?: string;
  labels?: Record<string, string>;
  /** Effective requests already computed by the caller, or the spec to compute them from. */
  requests?: ResourceList;
  spec?: SchedulingPodSpec;
  /** "namespace/name" of the owning DaemonSet, if any: its overhead is then already counted. */
  daemonSet?: string;
}

/**
 * A Node, or a NodeClaim that has no Node yet (in flight), that pods can be placed on without launching.
 * Karpenter takes an in-flight NodeClaim's labels, taints and allocatable from the NodeClaim itself:
 * its labels plus every requirement with a single value (the launched instance type, zone, capacity
 * type once launch chose them), its spec taints, and status.allocatable.
 */
export interface ExistingNode {
  /** Node name, or NodeClaim name for an in-flight NodeClaim. */
  name: string;
  kind: 'Node' | 'NodeClaim';
  /** The NodePool that owns it (karpenter.sh/nodepool), if managed. */
  nodePoolName?: string;
  labels: Record<string, string>;
  taints?: Taint[];
  allocatable: ResourceList;
  pods?: BoundPod[];
  /** Uninitialized managed nodes: their startup taints are ignored, as Karpenter does. */
  initialized?: boolean;
  startupTaints?: Taint[];
  /**
   * UIDs of pods this node must not receive: a consolidation simulation keeps the pods it moves away from
   * nodes still within their consolidateAfter (Karpenter's IsConsolidationSimulation).
   */
  refusedPods?: ReadonlySet<string>;
}

export interface DaemonSet {
  /** "namespace/name". */
  name: string;
  /** The pod template (labels and spec), as kube-scheduler will see the DaemonSet's pod on a node. */
  template: { labels?: Record<string, string>; spec: SchedulingPodSpec };
}

export interface SchedulingInput {
  pods: SchedulingPod[];
  /**
   * NodePools that may provision: as Karpenter, the caller leaves out static NodePools (replicas set),
   * NodePools not Ready and NodePools being deleted.
   */
  nodePools: SchedulingNodePool[];
  /** Nodes and in-flight NodeClaims, without those marked for deletion (their pods go in `pods`). */
  existingNodes?: ExistingNode[];
  daemonSets?: DaemonSet[];
  /** Namespace labels; needed only when some affinity term has a namespaceSelector. */
  namespaces?: { name: string; labels?: Record<string, string> }[];
  options?: SchedulingOptions;
}

/** Upstream's two scheduling policies (PREFERENCE_POLICY, MIN_VALUES_POLICY): every solve the app runs takes them. */
export type SchedulingPolicies = Pick<SchedulingOptions, 'preferencePolicy' | 'minValuesPolicy'>;

export interface SchedulingOptions {
  /** Instance types written on a NodeClaim, cheapest first (Karpenter's MaxInstanceTypes = 600). */
  maxInstanceTypes?: number;
  /** Respect (default) relaxes preferences only when needed; Ignore drops them up front. */
  preferencePolicy?: 'Respect' | 'Ignore';
  /**
   * Strict (default) fails a NodeClaim that cannot meet minValues; BestEffort opens it with the minValues
   * lowered to what its options have (NewNodeClaim.minValuesRelaxed).
   */
  minValuesPolicy?: 'Strict' | 'BestEffort';
  /**
   * Cost (default): the pods Karpenter's first fit placed are re-packed when that is cheaper
   * (cost-packer.ts). CostWithoutMoreNodeClaims: only into a plan with no more new NodeClaims than the
   * first fit's, for a caller that can act on one new NodeClaim at most (a consolidation command).
   * FirstFit: Karpenter's placement as it is.
   */
  packing?: 'Cost' | 'CostWithoutMoreNodeClaims' | 'FirstFit';
}

// ---------------------------------------------------------------------------------------------------
// Results

export interface PodReference {
  namespace: string;
  name: string;
  uid: string;
}

export interface NewNodeClaim {
  nodePoolName: string;
  /**
   * The NodeClaim's spec.requirements: the NodePool's, narrowed by the pods' (zone, capacity type, …),
   * with node.kubernetes.io/instance-type In [every type that still fits, cheapest first, at most
   * maxInstanceTypes] and karpenter.sh/capacity-type In [capacity types with an available offering].
   */
  requirements: NodeSelectorRequirement[];
  /** The same instance types as the requirement, cheapest first. */
  instanceTypeNames: string[];
  /** Pods' effective requests plus the DaemonSet overhead (the smallest across the instance types). */
  requests: ResourceList;
  /** The NodePool template's labels plus labels the pods' requirements fixed to a single value. */
  labels: Record<string, string>;
  pods: PodReference[];
  /** USD/h of the cheapest available compatible offering: what launch is expected to pay. */
  cheapestPrice: number;
  /**
   * Under MIN_VALUES_POLICY BestEffort: some requirement's minValues is lower in `requirements` than the
   * NodePool asks, the options having too few distinct values (karpenter.sh/nodeclaim-min-values-relaxed).
   */
  minValuesRelaxed?: true;
}

export interface ExistingPlacement {
  pod: PodReference;
  /** Node name, or NodeClaim name for an in-flight NodeClaim. */
  nodeName: string;
  kind: ExistingNode['kind'];
}

export interface UnschedulablePod {
  pod: PodReference;
  /** Why nothing fits, naming the NodePool and the requirement or resource: the FailedScheduling message. */
  reason: string;
  /**
   * Per NodePool asked, in the solve's order, the first constraint that excluded it. A cause that is not
   * about one NodePool (InvalidPod, NoNodePool) has a single entry with an empty `nodePool`.
   */
  causes: PodExclusion[];
  /** How many existing nodes (and in-flight NodeClaims) had no room for the pod either, when any did. */
  existingNodesFull?: number;
}

export interface SchedulingResult {
  newNodeClaims: NewNodeClaim[];
  existingPlacements: ExistingPlacement[];
  unschedulable: UnschedulablePod[];
}
