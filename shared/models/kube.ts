// Minimal Kubernetes object shapes the domain reads and writes. Adapters convert from
// @kubernetes/client-node types at the edge so pure decisions never depend on the client library.

export interface ObjectMeta {
  name: string;
  /** Kept on the object for the record when `name` is set too (the server then ignores it). */
  generateName?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export type TaintEffect = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  timeAdded?: string;
}

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export type RequirementOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt' | 'Gte' | 'Lte';

export interface NodeSelectorRequirement {
  key: string;
  operator: RequirementOperator;
  values?: string[];
  minValues?: number;
}

export type ResourceList = Record<string, string>;

export interface Node {
  apiVersion?: 'v1';
  kind?: 'Node';
  metadata: ObjectMeta;
  spec: {
    providerID?: string;
    taints?: Taint[];
    unschedulable?: boolean;
  };
  status?: {
    capacity?: ResourceList;
    allocatable?: ResourceList;
    conditions?: NodeCondition[];
    /** What the kubelet reports of itself; the provider's Kubernetes version drift reads its version. */
    nodeInfo?: { kubeletVersion?: string };
  };
}

/** A Node's status condition; lastTransitionTime is when its status last changed (RFC 3339). */
export interface NodeCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
