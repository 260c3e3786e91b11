// Registration decisions: which Node belongs to a NodeClaim, and what that Node must look like once it is
// registered. The whole sync (labels, annotations, taints, finalizer, ownerReference) and the removal of
// karpenter.sh/unregistered are computed as one new Node state so the adapter can write them in a single
// resourceVersion-guarded request: the Node is never observable without the unregistered taint while it
// still lacks the NodeClaim's labels and taints.
import { ConditionTypes, KARPENTER_GROUP, KARPENTER_VERSION, WellKnown } from '../models/karpenter.js';
import type { NodeClaim, NodeClaimStatus } from '../models/karpenter.js';
import type { Node, OwnerReference, Taint } from '../models/kube.js';
import { setCondition, type ConditionUpdate } from './conditions.js';
import { guardedNodePatch, type JsonPatchOperation } from './node-patch.js';
import { plainEqual } from './plain-equal.js';

export const RegistrationReasons = {
  registered: 'Registered',
  nodeNotFound: 'NodeNotFound',
  multipleNodesFound: 'MultipleNodesFound',
  /** Warning event reason for a Node that joined without karpenter.sh/unregistered. */
  unregisteredTaintMissing: 'UnregisteredTaintMissing',
} as const;

export type NodeMatch =
  { outcome: 'found'; node: Node } | { outcome: 'none' } | { outcome: 'multiple'; nodeNames: string[] };

export interface NodeRegistrationPlan {
  /** The Node's complete new state; the input object itself when nothing changes. */
  node: Node;
  changed: boolean;
  /** The Node joined without the unregistered taint and was never synced: emit a Warning event. */
  unregisteredTaintMissing: boolean;
}

// ARM resource IDs are case-insensitive and different components (cloud-node-manager, our launch code)
// do not agree on the casing of the resource group, so provider IDs are compared without case.
export function sameProviderID(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

export function findNodesForClaim(nodes: readonly Node[], providerID: string): Node[] {
  if (providerID === '') return [];
  return nodes.filter(
    (n) => n.spec.providerID !== undefined && sameProviderID(n.spec.providerID, providerID),
  );
}

export function matchNodeForClaim(nodeClaim: NodeClaim, nodes: readonly Node[]): NodeMatch {
  const providerID = nodeClaim.status?.providerID;
  if (!providerID) return { outcome: 'none' };
  const found = findNodesForClaim(nodes, providerID);
  const [first] = found;
  if (first === undefined) return { outcome: 'none' };
  if (found.length === 1) return { outcome: 'found', node: first };
  return { outcome: 'multiple', nodeNames: found.map((n) => n.metadata.name).sort() };
}

/** Registered condition for the outcomes that do not register anything. */
export function registrationConditionFor(match: Exclude<NodeMatch, { outcome: 'found' }>): ConditionUpdate {
  if (match.outcome === 'none') {
    return {
      type: ConditionTypes.registered,
      status: 'Unknown',
      reason: RegistrationReasons.nodeNotFound,
      message: 'Node not registered with cluster',
    };
  }
  return {
    type: ConditionTypes.registered,
    status: 'False',
    reason: RegistrationReasons.multipleNodesFound,
    message: `Invariant violated, matched multiple nodes: ${match.nodeNames.join(', ')}`,
  };
}

/** NodeClaim status after its Node has been synced: Registered=True and status.nodeName. */
export function nodeClaimRegisteredStatus(
  nodeClaim: NodeClaim,
  nodeName: string,
  now: Date,
): NodeClaimStatus {
  const status = nodeClaim.status ?? {};
  return {
    ...status,
    nodeName,
    conditions: setCondition(
      status.conditions,
      {
        type: ConditionTypes.registered,
        status: 'True',
        reason: RegistrationReasons.registered,
        message: '',
      },
      now,
    ),
  };
}

function taintsMatch(a: Taint, b: Taint): boolean {
  // Kubernetes identifies a taint by key and effect; the value is data.
  return a.key === b.key && a.effect === b.effect;
}

/** Adds each taint of `incoming` that the list lacks (by key and effect); existing taints keep their value. */
function mergeTaints(existing: readonly Taint[], incoming: readonly Taint[] | undefined): Taint[] {
  const result = [...existing];
  for (const taint of incoming ?? []) {
    if (!result.some((t) => taintsMatch(t, taint))) result.push({ ...taint });
  }
  return result;
}

function hasUnregisteredTaint(node: Node): boolean {
  return (node.spec.taints ?? []).some((t) => t.key === WellKnown.unregisteredTaintKey);
}

function syncsTaints(node: Node): boolean {
  return node.metadata.labels?.[WellKnown.doNotSyncTaintsLabel] !== 'true';
}

function isMarkedRegistered(node: Node): boolean {
  return node.metadata.labels?.[WellKnown.registeredLabel] === 'true';
}

function nodeClaimOwnerReference(nodeClaim: NodeClaim): OwnerReference {
  const uid = nodeClaim.metadata.uid;
  if (!uid) throw new Error(`NodeClaim ${nodeClaim.metadata.name} has no uid; cannot own its Node`);
  return {
    apiVersion: `${KARPENTER_GROUP}/${KARPENTER_VERSION}`,
    kind: 'NodeClaim',
    name: nodeClaim.metadata.name,
    uid,
    blockOwnerDeletion: true,
  };
}

function withOwnerReference(existing: readonly OwnerReference[], owner: OwnerReference): OwnerReference[] {
  const present = existing.some((o) => o.kind === owner.kind && o.uid === owner.uid);
  return present ? [...existing] : [...existing, owner];
}

/**
 * The Node as it must be once registered to `nodeClaim`. Idempotent: planning against a Node that
 * already carries the result returns it unchanged.
 *
 * Startup taints are merged only while the Node has not been marked registered: they exist to be removed
 * by someone else (a CNI or device plugin) after registration, and re-adding them on a retry would undo
 * that removal and block initialization.
 */
export function planNodeRegistration(nodeClaim: NodeClaim, node: Node): NodeRegistrationPlan {
  const alreadyMarked = isMarkedRegistered(node);
  const unregisteredTaintMissing = !alreadyMarked && !hasUnregisteredTaint(node);

  let taints = [...(node.spec.taints ?? [])];
  if (syncsTaints(node)) {
    taints = mergeTaints(taints, nodeClaim.spec.taints);
    if (!alreadyMarked) taints = mergeTaints(taints, nodeClaim.spec.startupTaints);
  }
  taints = taints.filter((t) => t.key !== WellKnown.unregisteredTaintKey);

  const finalizers = node.metadata.finalizers ?? [];
  const next: Node = {
    ...node,
    metadata: {
      ...node.metadata,
      labels: {
        ...node.metadata.labels,
        ...nodeClaim.metadata.labels,
        [WellKnown.registeredLabel]: 'true',
      },
      annotations: { ...node.metadata.annotations, ...nodeClaim.metadata.annotations },
      finalizers: finalizers.includes(WellKnown.terminationFinalizer)
        ? [...finalizers]
        : [...finalizers, WellKnown.terminationFinalizer],
      ownerReferences: withOwnerReference(
        node.metadata.ownerReferences ?? [],
        nodeClaimOwnerReference(nodeClaim),
      ),
    },
    spec: { ...node.spec, taints },
  };

  const changed = !sameSyncedFields(node, next);
  return { node: changed ? next : node, changed, unregisteredTaintMissing };
}

function sameSyncedFields(a: Node, b: Node): boolean {
  const emptyAsUndefined = <T>(list: T[] | undefined): T[] | undefined => (list?.length ? list : undefined);
  const emptyMapAsUndefined = (map: Record<string, string> | undefined) =>
    map && Object.keys(map).length > 0 ? map : undefined;
  return (
    plainEqual(emptyMapAsUndefined(a.metadata.labels), emptyMapAsUndefined(b.metadata.labels)) &&
    plainEqual(emptyMapAsUndefined(a.metadata.annotations), emptyMapAsUndefined(b.metadata.annotations)) &&
    plainEqual(emptyAsUndefined(a.metadata.finalizers), emptyAsUndefined(b.metadata.finalizers)) &&
    plainEqual(emptyAsUndefined(a.metadata.ownerReferences), emptyAsUndefined(b.metadata.ownerReferences)) &&
    plainEqual(emptyAsUndefined(a.spec.taints), emptyAsUndefined(b.spec.taints))
  );
}

/**
 * The single guarded write that takes the Node from `before` (as read, with its resourceVersion) to the
 * planned state: a JSON Patch whose first operation pins /metadata/resourceVersion, so a Node changed in
 * between makes the apiserver answer 409 Conflict (re-read, re-plan, retry; never overwrite). Empty when
 * there is nothing to write. See node-patch.ts for why this is a patch and not a PUT.
 */
export function registrationPatch(before: Node, after: Node): JsonPatchOperation[] {
  return guardedNodePatch(before, after);
}

/**
 * The safety property registration must never break, for any Node version a watcher can observe: the
 * Node either still carries karpenter.sh/unregistered, or already carries every label of the NodeClaim
 * and every one of its `spec.taints` (by key and effect, unless taint sync is disabled on the Node).
 * Startup taints are left out on purpose: removing them after registration is their whole point.
 */
export function nodeSatisfiesRegistrationInvariant(node: Node, nodeClaim: NodeClaim): boolean {
  if (hasUnregisteredTaint(node)) return true;
  const labels = node.metadata.labels ?? {};
  const hasLabels = Object.entries(nodeClaim.metadata.labels ?? {}).every(([k, v]) => labels[k] === v);
  if (!hasLabels) return false;
  if (!syncsTaints(node)) return true;
  const taints = node.spec.taints ?? [];
  return (nodeClaim.spec.taints ?? []).every((wanted) => taints.some((t) => taintsMatch(t, wanted)));
}
