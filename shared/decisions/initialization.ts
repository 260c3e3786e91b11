// Initialization: a registered Node is Initialized once it can actually take the workloads the NodeClaim
// was made for, i.e. it is Ready, nothing is still holding it back with a taint, and the extended
// resources the NodeClaim asked for (GPUs and the like) have been advertised by their device plugins.
import { ConditionTypes, WellKnown } from '../models/karpenter.js';
import type { NodeClaim } from '../models/karpenter.js';
import type { Node, Taint } from '../models/kube.js';
import { findCondition, isConditionTrue, type ConditionUpdate } from './conditions.js';
import { guardedNodePatch, type JsonPatchOperation } from './node-patch.js';

export const InitializationReasons = {
  initialized: 'Initialized',
  notRegistered: 'NotRegistered',
  nodeNotFound: 'NodeNotFound',
  nodeNotReady: 'NodeNotReady',
  startupTaintsExist: 'StartupTaintsExist',
  knownEphemeralTaintsExist: 'KnownEphemeralTaintsExist',
  resourceNotRegistered: 'ResourceNotRegistered',
} as const;

/** Taints that Kubernetes components (or registration) put on a Node only until it is usable. */
export const KnownEphemeralTaintKeys: readonly string[] = [
  'node.kubernetes.io/not-ready',
  'node.kubernetes.io/unreachable',
  'node.cloudprovider.kubernetes.io/uninitialized',
  WellKnown.unregisteredTaintKey,
];

/** Requests every Node advertises from the start; anything else is an extended resource to wait for. */
const BUILT_IN_RESOURCES = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

export type InitializationVerdict = ConditionUpdate & {
  type: typeof ConditionTypes.initialized;
  message: string;
};

function verdict(status: 'True' | 'Unknown', reason: string, message: string): InitializationVerdict {
  return { type: ConditionTypes.initialized, status, reason, message };
}

function describeTaint(taint: Taint): string {
  return taint.value ? `${taint.key}=${taint.value}:${taint.effect}` : `${taint.key}:${taint.effect}`;
}

/**
 * Whether a Kubernetes quantity string is zero. Only the leading number matters for that question
 * ("0", "0m", "0Gi", "0.0" are all zero). Absent means zero; an unparsable string is not provably zero.
 */
export function quantityIsZero(quantity: string | undefined): boolean {
  if (quantity === undefined) return true;
  const match = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?/i.exec(quantity.trim());
  if (!match) return false;
  return Number(match[0]) === 0;
}

/**
 * Initialized condition for `nodeClaim` given its Node (undefined when not found). Once Initialized is
 * True it stays True: the disruption budget counts initialized nodes, and a node that later goes
 * NotReady is a health matter, not a return to "still starting".
 */
export function evaluateInitialization(nodeClaim: NodeClaim, node: Node | undefined): InitializationVerdict {
  const conditions = nodeClaim.status?.conditions;
  const current = findCondition(conditions, ConditionTypes.initialized);
  if (current?.status === 'True') return verdict('True', current.reason, current.message);

  if (!isConditionTrue(conditions, ConditionTypes.registered)) {
    return verdict('Unknown', InitializationReasons.notRegistered, 'Node not registered with cluster');
  }
  if (node === undefined) {
    return verdict('Unknown', InitializationReasons.nodeNotFound, 'Node not found');
  }
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') {
    return verdict('Unknown', InitializationReasons.nodeNotReady, 'Node status is NotReady');
  }

  const taints = node.spec.taints ?? [];
  const startupTaint = taints.find((t) =>
    (nodeClaim.spec.startupTaints ?? []).some((s) => s.key === t.key && s.effect === t.effect),
  );
  if (startupTaint) {
    return verdict(
      'Unknown',
      InitializationReasons.startupTaintsExist,
      `StartupTaint "${describeTaint(startupTaint)}" still exists`,
    );
  }
  // Matched by key alone: the node lifecycle controller uses both NoSchedule and NoExecute variants.
  const ephemeralTaint = taints.find((t) => KnownEphemeralTaintKeys.includes(t.key));
  if (ephemeralTaint) {
    return verdict(
      'Unknown',
      InitializationReasons.knownEphemeralTaintsExist,
      `KnownEphemeralTaint "${describeTaint(ephemeralTaint)}" still exists`,
    );
  }

  const allocatable = node.status?.allocatable ?? {};
  const missing = Object.entries(nodeClaim.spec.resources?.requests ?? {})
    .filter(([name, quantity]) => !BUILT_IN_RESOURCES.has(name) && !quantityIsZero(quantity))
    .map(([name]) => name)
    .sort()
    .find((name) => quantityIsZero(allocatable[name]));
  if (missing !== undefined) {
    return verdict(
      'Unknown',
      InitializationReasons.resourceNotRegistered,
      `Resource "${missing}" was requested but not registered`,
    );
  }
  return verdict('True', InitializationReasons.initialized, '');
}

/**
 * A registered Node of a NodePool (registration copied karpenter.sh/nodepool onto it) that is not yet
 * labelled initialized: the changes that can initialize it (Ready, a startup taint removed) are worth an
 * event, so a replacement is Initialized when its Node is, not at the next sweep.
 */
export function awaitsInitialization(node: Pick<Node, 'metadata'>): boolean {
  const labels = node.metadata.labels ?? {};
  return labels[WellKnown.nodePoolLabel] !== undefined && labels[WellKnown.initializedLabel] !== 'true';
}

/** Node labels with karpenter.sh/initialized=true; the input object itself when already present. */
export function nodeLabelsAfterInitialization(node: Node): Record<string, string> {
  const labels = node.metadata.labels ?? {};
  return labels[WellKnown.initializedLabel] === 'true'
    ? labels
    : { ...labels, [WellKnown.initializedLabel]: 'true' };
}

/** Guarded JSON Patch adding karpenter.sh/initialized=true to the Node; empty when already there. */
export function initializedLabelPatch(node: Node): JsonPatchOperation[] {
  const labels = nodeLabelsAfterInitialization(node);
  if (labels === node.metadata.labels) return [];
  return guardedNodePatch(node, { ...node, metadata: { ...node.metadata, labels } });
}
