// The NodePool status Karpenter keeps, as a function of plain data:
//   status.resources / status.nodes: the capacity of the pool's nodes and how many there are
//     (kubernetes-sigs/karpenter pkg/controllers/nodepool/counter): every NodeClaim of the pool that is
//     not being deleted and has a capacity, with its Node's capacity once the Node exists;
//   NodeClassReady (pkg/controllers/nodepool/readiness): the referenced class's Ready condition;
//   Ready: True when ValidationSucceeded and NodeClassReady are both True, as operatorpkg's root
//     condition is computed from its dependents. ValidationSucceeded itself is written with the budget
//     validation (lifecycle/disruption/budget-status.ts) and only read here;
//   status.observedGeneration, status.upToDateNodes and status.readyNodes, as kubernetes-sigs/karpenter's
//     NodePool rollout RFC (#3216) shapes them: the generation this status was computed from, and of the
//     nodes counted in status.nodes, those not Drifted and those whose Node is Ready;
//   RolledOut: whether every node is up to date and no rollout is in progress (rollout-condition.ts).
//     Not a dependent of Ready: a NodePool halfway through a rollout still provisions.
import type { AKSNodeClass, NodeClaim, NodePool } from '../models/index.js';
import type { Condition, Node } from '../models/kube.js';
import { WellKnown } from '../models/karpenter.js';
import { findCondition, setCondition, type ConditionUpdate } from './conditions.js';
import { tryParseQuantity } from './quantity.js';
import { rolledOutCondition } from './rollout-condition.js';
import { driftCountsOf, isDrifted, rolloutTargetOf, type RolloutPolicy } from './rollout.js';

export const NodePoolConditions = {
  validationSucceeded: 'ValidationSucceeded',
  nodeClassReady: 'NodeClassReady',
  ready: 'Ready',
  rolledOut: 'RolledOut',
} as const;

/** The resources Karpenter always reports, zero when the pool has no nodes. */
const BASE_RESOURCES = ['cpu', 'memory', 'pods', 'ephemeral-storage'] as const;

export interface NodePoolStatusInput {
  nodePool: NodePool;
  /** The pool's NodeClaims (label karpenter.sh/nodepool). */
  nodeClaims: readonly NodeClaim[];
  /** Nodes by the providerID of their NodeClaim. */
  nodesOf: (nodeClaim: NodeClaim) => readonly Node[];
  /** The class spec.template.spec.nodeClassRef names, or undefined when it does not exist. */
  nodeClass: AKSNodeClass | undefined;
  now: Date;
  /** ROLLOUT_POLICY, for the RolledOut condition of a NodePool without the policy annotation. */
  defaultRolloutPolicy?: RolloutPolicy;
}

export interface NodePoolStatusFields {
  /** metadata.generation; absent when the NodePool has none (never on the API server). */
  observedGeneration?: number;
  nodes: number;
  /** Of `nodes`, those whose NodeClaim is not Drifted. */
  upToDateNodes: number;
  /** Of `nodes`, those whose Node is Ready=True. */
  readyNodes: number;
  resources: Record<string, string>;
  conditions: Condition[];
}

/** Formats a sum the way the API server canonicalizes it: whole units, else milli-units. */
function formatQuantity(name: string, total: number): string {
  if (name === 'cpu') return Number.isInteger(total) ? String(total) : `${Math.round(total * 1000)}m`;
  if (name === 'pods') return String(Math.round(total));
  // Bytes: Ki when whole kibibytes, as kubelet reports memory and ephemeral storage.
  return total % 1024 === 0 ? `${total / 1024}Ki` : String(Math.round(total));
}

/** The NodeClaims status.nodes counts: not deleting, with a capacity (its Node's, or its own). */
function countedNode(
  nodeClaim: NodeClaim,
  nodesOf: (nodeClaim: NodeClaim) => readonly Node[],
): { node: Node | undefined; capacity: Record<string, string> } | undefined {
  if (nodeClaim.metadata.deletionTimestamp) return undefined;
  const node = nodesOf(nodeClaim).find((n) => !n.metadata.deletionTimestamp);
  const capacity = node?.status?.capacity ?? nodeClaim.status?.capacity;
  if (!capacity || Object.keys(capacity).length === 0) return undefined;
  return { node, capacity };
}

/** Of the nodes status.nodes counts: those not Drifted, and those whose Node is Ready. */
export function poolNodeStates(
  nodeClaims: readonly NodeClaim[],
  nodesOf: (nodeClaim: NodeClaim) => readonly Node[],
): { upToDateNodes: number; readyNodes: number } {
  let upToDateNodes = 0;
  let readyNodes = 0;
  for (const nodeClaim of nodeClaims) {
    const counted = countedNode(nodeClaim, nodesOf);
    if (!counted) continue;
    if (!isDrifted(nodeClaim)) upToDateNodes += 1;
    if (counted.node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) {
      readyNodes += 1;
    }
  }
  return { upToDateNodes, readyNodes };
}

export function poolResources(
  nodeClaims: readonly NodeClaim[],
  nodesOf: (nodeClaim: NodeClaim) => readonly Node[],
): { nodes: number; resources: Record<string, string> } {
  const totals = new Map<string, number>(BASE_RESOURCES.map((name) => [name, 0]));
  let nodes = 0;
  for (const nodeClaim of nodeClaims) {
    const counted = countedNode(nodeClaim, nodesOf);
    if (!counted) continue;
    const { capacity } = counted;
    nodes += 1;
    for (const [name, quantity] of Object.entries(capacity)) {
      const value = tryParseQuantity(quantity);
      if (value !== undefined) totals.set(name, (totals.get(name) ?? 0) + value);
    }
  }
  const resources: Record<string, string> = {};
  for (const [name, total] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    resources[name] = formatQuantity(name, total);
  }
  resources.nodes = String(nodes);
  return { nodes, resources };
}

function nodeClassReadiness(nodeClass: AKSNodeClass | undefined): ConditionUpdate {
  const type = NodePoolConditions.nodeClassReady;
  if (!nodeClass)
    return { type, status: 'False', reason: 'NodeClassNotFound', message: 'NodeClass not found on cluster' };
  if (nodeClass.metadata.deletionTimestamp) {
    return { type, status: 'False', reason: 'NodeClassTerminating', message: 'NodeClass is Terminating' };
  }
  const ready = findCondition(nodeClass.status?.conditions, 'Ready');
  if (!ready || ready.status === 'Unknown') {
    return {
      type,
      status: 'False',
      reason: 'NodeClassReadinessUnknown',
      message: 'Node Class Readiness Unknown',
    };
  }
  if (ready.status === 'False')
    return { type, status: 'False', reason: ready.reason, message: ready.message ?? '' };
  return { type, status: 'True', reason: type, message: '' };
}

/** Ready from its dependents: True when all are True, False when any is False, else Unknown. */
export function rootReadiness(
  conditions: readonly Condition[],
  dependents: readonly string[],
): ConditionUpdate {
  const states = dependents.map((type) => ({ type, condition: findCondition(conditions, type) }));
  const unhealthy = states.filter((s) => s.condition?.status !== 'True');
  if (unhealthy.length === 0) return { type: 'Ready', status: 'True', reason: 'Ready', message: '' };
  const failed = unhealthy.filter((s) => s.condition?.status === 'False');
  const listed = unhealthy.map((s) => `${s.type}=${s.condition?.status ?? 'Unknown'}`).join(', ');
  return {
    type: 'Ready',
    status: failed.length > 0 ? 'False' : 'Unknown',
    reason: 'UnhealthyDependents',
    message: listed,
  };
}

export function desiredNodePoolStatus(input: NodePoolStatusInput): NodePoolStatusFields {
  const { nodes, resources } = poolResources(input.nodeClaims, input.nodesOf);
  const generation = input.nodePool.metadata.generation;
  const withGeneration = (update: ConditionUpdate): ConditionUpdate =>
    generation === undefined ? update : { ...update, observedGeneration: generation };
  let conditions = setCondition(
    input.nodePool.status?.conditions,
    withGeneration(nodeClassReadiness(input.nodeClass)),
    input.now,
  );
  conditions = setCondition(
    conditions,
    withGeneration(
      rootReadiness(conditions, [NodePoolConditions.validationSucceeded, NodePoolConditions.nodeClassReady]),
    ),
    input.now,
  );
  const { upToDateNodes, readyNodes } = poolNodeStates(input.nodeClaims, input.nodesOf);
  conditions = setCondition(
    conditions,
    withGeneration(
      rolledOutCondition({
        nodePool: input.nodePool,
        target: rolloutTargetOf(input.nodePool, input.nodeClass),
        defaultPolicy: input.defaultRolloutPolicy ?? 'Canary',
        nodes,
        upToDateNodes,
        drifted: driftCountsOf(input.nodeClaims, input.nodesOf).drifted,
      }),
    ),
    input.now,
  );
  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    nodes,
    upToDateNodes,
    readyNodes,
    resources,
    conditions,
  };
}

/** The pool's NodeClaims. */
export function nodeClaimsOfPool(nodePool: NodePool, nodeClaims: readonly NodeClaim[]): NodeClaim[] {
  return nodeClaims.filter((c) => c.metadata.labels?.[WellKnown.nodePoolLabel] === nodePool.metadata.name);
}

/**
 * status.disruptionBlocked as the last disruption pass counted it (explain/disruption-record.ts
 * blockedByCause): sorted by cause, only causes that kept a node. A NodePool whose pass kept none
 * carries an empty list, which reads the same as the field not being there.
 */
export function disruptionBlockedStatus(
  counts: readonly { cause: string; count: number }[],
): { cause: string; count: number }[] {
  return counts
    .filter((c) => c.count > 0)
    .map((c) => ({ cause: c.cause, count: c.count }))
    .sort((a, b) => (a.cause < b.cause ? -1 : a.cause > b.cause ? 1 : 0));
}

/** Whether status.disruptionBlocked already says `desired` (absent equals empty). */
export function disruptionBlockedUnchanged(
  current: readonly { cause: string; count: number }[] | undefined,
  desired: readonly { cause: string; count: number }[],
): boolean {
  const now = current ?? [];
  return (
    now.length === desired.length &&
    now.every((c, i) => c.cause === desired[i]?.cause && c.count === desired[i]?.count)
  );
}
