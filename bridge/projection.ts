// Slim, typed copies of watched objects. The informers cache these instead of whole objects, so the
// bridge's memory grows with the few fields it reads, not with the size of Node statuses. The input is
// either raw watch JSON or a @kubernetes/client-node model from a list call; both spell the fields read
// here the same way, and timestamps may be strings or Dates.
import type { WatchedKind } from '../shared/events/cloud-event.js';
import type { AKSNodeClass } from '../shared/models/aks-node-class.js';
import { WellKnown, type NodeClaim, type NodePool } from '../shared/models/karpenter.js';
import type {
  Condition,
  ConditionStatus,
  Node,
  ObjectMeta,
  Taint,
  TaintEffect,
} from '../shared/models/kube.js';

/**
 * The fields of a pending Pod that decide whether it is provisionable, and nothing else: at 20,000
 * pending pods the cache holds these instead of whole pod specs.
 */
export interface PodView {
  metadata: ObjectMeta & { namespace: string };
  nodeName?: string;
  nominatedNodeName?: string;
  /** PodScheduled's status and reason, when the scheduler has written it. */
  scheduled?: { status: ConditionStatus; reason: string };
  /** Kinds of the pod's controller owner references (DaemonSet and Node pods are never provisioned). */
  ownerKinds?: string[];
}

export interface WatchedObjects {
  NodeClaim: NodeClaim;
  Node: Node;
  NodePool: NodePool;
  AKSNodeClass: AKSNodeClass;
  Pod: PodView;
}

export type WatchedObject = WatchedObjects[WatchedKind];

export function projectNodeClaim(raw: unknown): NodeClaim {
  const spec = record(field(raw, 'spec'));
  const status = record(field(raw, 'status'));
  const nodeClassRef = record(spec['nodeClassRef']);
  const metadata = projectMeta(field(raw, 'metadata'));
  // Only the NodePool label: a deletion event names the NodePool whose budget slot it frees.
  const nodePool = text(record(record(field(raw, 'metadata'))['labels'])[WellKnown.nodePoolLabel]);
  if (nodePool !== undefined) metadata.labels = { [WellKnown.nodePoolLabel]: nodePool };
  const projected: NodeClaim = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata,
    spec: {
      nodeClassRef: {
        group: text(nodeClassRef['group']) ?? '',
        kind: text(nodeClassRef['kind']) ?? '',
        name: text(nodeClassRef['name']) ?? '',
      },
      requirements: [],
    },
  };
  const providerID = text(status['providerID']);
  const nodeName = text(status['nodeName']);
  const conditions = projectConditions(status['conditions']);
  if (providerID !== undefined || nodeName !== undefined || conditions !== undefined) {
    projected.status = {
      ...(providerID !== undefined && { providerID }),
      ...(nodeName !== undefined && { nodeName }),
      ...(conditions !== undefined && { conditions }),
    };
  }
  return projected;
}

export function projectNode(raw: unknown): Node {
  const spec = record(field(raw, 'spec'));
  const status = record(field(raw, 'status'));
  const providerID = text(spec['providerID']);
  const taints = Array.isArray(spec['taints']) ? spec['taints'].map(projectTaint) : undefined;
  const metadata = projectMeta(field(raw, 'metadata'));
  // Only the two labels initialization is decided by (awaitsInitialization): a registered Node, labelled
  // with its NodePool, is forwarded until it is labelled initialized. Without them the bridge could not
  // tell such a Node, and initialization waited for the next sweep.
  const rawLabels = record(record(field(raw, 'metadata'))['labels']);
  const labels: Record<string, string> = {};
  for (const key of [WellKnown.nodePoolLabel, WellKnown.initializedLabel]) {
    const value = text(rawLabels[key]);
    if (value !== undefined) labels[key] = value;
  }
  if (Object.keys(labels).length > 0) metadata.labels = labels;
  const projected: Node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata,
    spec: {
      ...(providerID !== undefined && { providerID }),
      ...(taints !== undefined && { taints }),
    },
  };
  // Each condition's type and status, nothing else: Ready for registration and initialization,
  // PreemptionScheduled for node repair (relevance.ts forwards a Node when that spot eviction notice
  // appears); reasons, messages and heartbeat times change on every kubelet report.
  if (Array.isArray(status['conditions'])) {
    projected.status = {
      conditions: status['conditions'].map((value) => {
        const condition = record(value);
        return { type: text(condition['type']) ?? '', status: conditionStatus(condition['status']) };
      }),
    };
  }
  return projected;
}

export function projectNodePool(raw: unknown): NodePool {
  const template = record(record(field(raw, 'spec'))['template']);
  const nodeClassRef = record(record(template['spec'])['nodeClassRef']);
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: projectMeta(field(raw, 'metadata')),
    spec: {
      template: {
        spec: {
          nodeClassRef: {
            group: text(nodeClassRef['group']) ?? '',
            kind: text(nodeClassRef['kind']) ?? '',
            name: text(nodeClassRef['name']) ?? '',
          },
          requirements: [],
        },
      },
    },
  };
}

export function projectAKSNodeClass(raw: unknown): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: projectMeta(field(raw, 'metadata')),
    spec: {},
  };
}

export function projectPod(raw: unknown): PodView {
  const metadata = record(field(raw, 'metadata'));
  const spec = record(field(raw, 'spec'));
  const status = record(field(raw, 'status'));
  const nodeName = text(spec['nodeName']) || undefined;
  const nominatedNodeName = text(status['nominatedNodeName']) || undefined;
  const scheduled = (Array.isArray(status['conditions']) ? status['conditions'] : [])
    .map(record)
    .find((condition) => condition['type'] === 'PodScheduled');
  const ownerKinds = (Array.isArray(metadata['ownerReferences']) ? metadata['ownerReferences'] : [])
    .map(record)
    .filter((owner) => owner['controller'] === true)
    .map((owner) => text(owner['kind']) ?? '');
  return {
    metadata: { ...projectMeta(metadata), namespace: text(metadata['namespace']) ?? '' },
    ...(nodeName !== undefined && { nodeName }),
    ...(nominatedNodeName !== undefined && { nominatedNodeName }),
    ...(scheduled !== undefined && {
      scheduled: { status: conditionStatus(scheduled['status']), reason: text(scheduled['reason']) ?? '' },
    }),
    ...(ownerKinds.length > 0 && { ownerKinds }),
  };
}

export const projectors: { [K in WatchedKind]: (raw: unknown) => WatchedObjects[K] } = {
  NodeClaim: projectNodeClaim,
  Node: projectNode,
  NodePool: projectNodePool,
  AKSNodeClass: projectAKSNodeClass,
  Pod: projectPod,
};

function projectMeta(raw: unknown): ObjectMeta {
  const meta = record(raw);
  const uid = text(meta['uid']);
  const resourceVersion = text(meta['resourceVersion']);
  const generation = typeof meta['generation'] === 'number' ? meta['generation'] : undefined;
  const deletionTimestamp = timestamp(meta['deletionTimestamp']);
  const finalizers = Array.isArray(meta['finalizers'])
    ? meta['finalizers'].filter((value): value is string => typeof value === 'string')
    : undefined;
  return {
    name: text(meta['name']) ?? '',
    ...(uid !== undefined && { uid }),
    ...(resourceVersion !== undefined && { resourceVersion }),
    ...(generation !== undefined && { generation }),
    ...(deletionTimestamp !== undefined && { deletionTimestamp }),
    ...(finalizers !== undefined && { finalizers }),
  };
}

function projectConditions(raw: unknown): Condition[] | undefined {
  if (!Array.isArray(raw)) return undefined;
  return raw.map((value) => {
    const condition = record(value);
    const observedGeneration =
      typeof condition['observedGeneration'] === 'number' ? condition['observedGeneration'] : undefined;
    return {
      type: text(condition['type']) ?? '',
      status: conditionStatus(condition['status']),
      reason: text(condition['reason']) ?? '',
      message: text(condition['message']) ?? '',
      lastTransitionTime: timestamp(condition['lastTransitionTime']) ?? '',
      ...(observedGeneration !== undefined && { observedGeneration }),
    };
  });
}

function projectTaint(raw: unknown): Taint {
  const taint = record(raw);
  const value = text(taint['value']);
  return {
    key: text(taint['key']) ?? '',
    effect: (text(taint['effect']) ?? 'NoSchedule') as TaintEffect,
    ...(value !== undefined && { value }),
  };
}

function conditionStatus(raw: unknown): ConditionStatus {
  return raw === 'True' || raw === 'False' ? raw : 'Unknown';
}

function field(raw: unknown, name: string): unknown {
  return record(raw)[name];
}

function record(raw: unknown): Record<string, unknown> {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw)
    ? (raw as Record<string, unknown>)
    : {};
}

function text(raw: unknown): string | undefined {
  return typeof raw === 'string' ? raw : undefined;
}

function timestamp(raw: unknown): string | undefined {
  if (raw instanceof Date) return raw.toISOString();
  return text(raw);
}
