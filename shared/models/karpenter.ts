// karpenter.sh/v1 NodePool and NodeClaim, limited to the fields this project reads or writes.
import type { Condition, NodeSelectorRequirement, ObjectMeta, ResourceList, Taint } from './kube.js';

export const KARPENTER_GROUP = 'karpenter.sh';
export const KARPENTER_VERSION = 'v1';

export interface NodeClassReference {
  group: string;
  kind: string;
  name: string;
}

/**
 * Why a node is disrupted. `Unhealthy` is node repair's reason (upstream's since v1.15); the CRD's budget
 * `reasons` enum does not list it yet, so only budgets without `reasons` pace repair.
 */
export type DisruptionReason = 'Drifted' | 'Underutilized' | 'Empty' | 'Unhealthy';

/** Values the CRDs default when the fields are omitted (the API server fills them in on write). */
export const KarpenterDefaults = {
  budgetNodes: '10%',
  consolidateAfter: '0s',
  consolidationPolicy: 'WhenEmptyOrUnderutilized',
  expireAfter: '720h',
} as const;

export interface Budget {
  /** A count ("5") or a percentage ("10%"). */
  nodes: string;
  /** Cron expression (UTC) or macro such as "@daily"; requires `duration`. */
  schedule?: string;
  /** Go duration such as "1h30m"; requires `schedule`. */
  duration?: string;
  reasons?: DisruptionReason[];
}

/** The NodePool's `spec.disruption.consolidationPolicy` values the CRD accepts. */
export type ConsolidationPolicy = 'WhenEmpty' | 'WhenEmptyOrUnderutilized' | 'Balanced';

export interface NodePoolDisruption {
  /** Duration such as "30s" / "1h5m", or "Never". The server defaults it to "0s". */
  consolidateAfter?: string;
  /** The server defaults it to "WhenEmptyOrUnderutilized". */
  consolidationPolicy?: ConsolidationPolicy;
  /** The server defaults it to one budget of "10%". */
  budgets?: Budget[];
}

export interface NodeClaimTemplateMetadata {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface NodeClaimTemplateSpec {
  nodeClassRef: NodeClassReference;
  requirements: NodeSelectorRequirement[];
  taints?: Taint[];
  startupTaints?: Taint[];
  /** Duration ("720h", "1h30m") or "Never"; the server defaults it to "720h". */
  expireAfter?: string;
  /** Duration such as "1h"; unset means drain without a deadline. */
  terminationGracePeriod?: string;
}

export interface NodePool {
  apiVersion: 'karpenter.sh/v1';
  kind: 'NodePool';
  metadata: ObjectMeta;
  spec: {
    template: {
      metadata?: NodeClaimTemplateMetadata;
      spec: NodeClaimTemplateSpec;
    };
    disruption?: NodePoolDisruption;
    limits?: ResourceList;
    weight?: number;
    replicas?: number;
  };
  status?: {
    conditions?: Condition[];
    resources?: ResourceList;
    nodes?: number;
    /** The NodePool generation this status was computed from (upstream's rollout RFC). */
    observedGeneration?: number;
    /** Of `nodes`, those not Drifted. */
    upToDateNodes?: number;
    /** Of `nodes`, those whose Node is Ready. */
    readyNodes?: number;
    nodeClassObservedGeneration?: number;
    /**
     * The last disruption pass's kept nodes per cause (decision-record.ts CandidateCause), sorted by cause;
     * causes with no node are not listed.
     */
    disruptionBlocked?: { cause: string; count: number }[];
  };
}

export interface NodeClaimSpec extends NodeClaimTemplateSpec {
  resources?: { requests?: ResourceList };
}

export interface NodeClaim {
  apiVersion: 'karpenter.sh/v1';
  kind: 'NodeClaim';
  metadata: ObjectMeta;
  spec: NodeClaimSpec;
  status?: NodeClaimStatus;
}

export interface NodeClaimStatus {
  providerID?: string;
  nodeName?: string;
  imageID?: string;
  capacity?: ResourceList;
  allocatable?: ResourceList;
  conditions?: Condition[];
  lastPodEventTime?: string;
}

/** Well-known keys reused from upstream Karpenter so existing manifests and tooling keep working. */
export const WellKnown = {
  unregisteredTaintKey: 'karpenter.sh/unregistered',
  disruptedTaintKey: 'karpenter.sh/disrupted',
  terminationFinalizer: 'karpenter.sh/termination',
  nodePoolLabel: 'karpenter.sh/nodepool',
  registeredLabel: 'karpenter.sh/registered',
  initializedLabel: 'karpenter.sh/initialized',
  capacityTypeLabel: 'karpenter.sh/capacity-type',
  doNotDisruptAnnotation: 'karpenter.sh/do-not-disrupt',
  doNotSyncTaintsLabel: 'karpenter.sh/do-not-sync-taints',
  nodePoolHashAnnotation: 'karpenter.sh/nodepool-hash',
  nodePoolHashVersionAnnotation: 'karpenter.sh/nodepool-hash-version',
  /** "true" when the scheduler lowered a minValues to create the NodeClaim (MIN_VALUES_POLICY=BestEffort). */
  minValuesRelaxedAnnotation: 'karpenter.sh/nodeclaim-min-values-relaxed',
  nodeClassHashAnnotation: 'karpenter.azure.com/aksnodeclass-hash',
  nodeClassHashVersionAnnotation: 'karpenter.azure.com/aksnodeclass-hash-version',
  instanceTypeLabel: 'node.kubernetes.io/instance-type',
  zoneLabel: 'topology.kubernetes.io/zone',
  regionLabel: 'topology.kubernetes.io/region',
  archLabel: 'kubernetes.io/arch',
  osLabel: 'kubernetes.io/os',
  skuFamilyLabel: 'karpenter.azure.com/sku-family',
  skuCpuLabel: 'karpenter.azure.com/sku-cpu',
  skuMemoryLabel: 'karpenter.azure.com/sku-memory',
  skuNameLabel: 'karpenter.azure.com/sku-name',
  /**
   * The reservation a reserved node uses: this provider's ReservationIDLabel (upstream's cloudprovider
   * hook; the AWS provider's is karpenter.k8s.aws/capacity-reservation-id).
   */
  capacityReservationIdLabel: 'karpenter.azure.com/capacity-reservation-id',
} as const;

export const ConditionTypes = {
  launched: 'Launched',
  registered: 'Registered',
  initialized: 'Initialized',
  drifted: 'Drifted',
  ready: 'Ready',
  disruptionReason: 'DisruptionReason',
} as const;

/** Upstream's capacity types; `reserved` is capacity held by a Capacity Reservation Group (gate ReservedCapacity). */
export type CapacityType = 'on-demand' | 'spot' | 'reserved';
