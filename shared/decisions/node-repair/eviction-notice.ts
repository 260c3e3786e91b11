// A spot eviction notice on a Node, and whether it calls for the repair to start now. Azure gives about
// 30 s between the notice (IMDS Scheduled Events Preempt, which the AKS node agent turns into the Node
// condition PreemptionScheduled=True) and the eviction, so the notice is answered from the bridge's Node
// event instead of at the next sweep. The bridge only asks whether the condition is there (it does not
// know the repair policies); the event handler asks whether a repair policy treats it as a preemption
// that is due, and whether the node is ours and not already on its way out.
import type { NodeClaim } from '../../models/karpenter.js';
import { WellKnown } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { hasDisruptedTaint, isMarkedForDisruption } from '../disruption-state.js';
import { PREEMPTION_SCHEDULED, unhealthyMatch, type RepairPolicy, type UnhealthyMatch } from './policies.js';

/** The Node carries PreemptionScheduled=True (the bridge's test: one message per transition to it). */
export function carriesEvictionNotice(node: Pick<Node, 'status'>): boolean {
  return (
    node.status?.conditions?.some((c) => c.type === PREEMPTION_SCHEDULED && c.status === 'True') ?? false
  );
}

/**
 * The repair policy with the `preempted` action that the Node matches, its toleration over or not; what
 * a handler checks before it reads anything else, since most Node events carry no notice.
 */
export function evictionNoticeMatch(
  node: Node,
  policies: readonly RepairPolicy[],
  now: Date,
): UnhealthyMatch | undefined {
  return unhealthyMatch(
    node,
    policies.filter((policy) => policy.action === 'preempted'),
    now,
  );
}

export type EvictionNoticeVerdict =
  | { repairNow: true; nodePool: string; nodeClaim: NodeClaim; match: UnhealthyMatch }
  | { repairNow: false; why: string };

/**
 * Whether the Node's eviction notice starts its NodeClaim's repair now: the repair policy with the
 * `preempted` action that the Node matches (evictionNoticeMatch) has no toleration left, the Node belongs
 * to a NodeClaim of a NodePool, and neither is already being deleted or disrupted (then the repair, or
 * another disruption, has begun and the repair method would pass the node over anyway).
 */
export function evictionNoticeVerdict(input: {
  node: Node;
  nodeClaim: NodeClaim | undefined;
  match: UnhealthyMatch | undefined;
  now: Date;
}): EvictionNoticeVerdict {
  const { node, nodeClaim, match, now } = input;
  if (!match)
    return { repairNow: false, why: 'no repair policy treats a condition of the Node as preemption' };
  if (match.repairableAt > now) return { repairNow: false, why: 'the preemption toleration has not ended' };
  if (!nodeClaim) return { repairNow: false, why: 'the Node belongs to no NodeClaim' };
  const nodePool = nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel];
  if (!nodePool) return { repairNow: false, why: 'the NodeClaim belongs to no NodePool' };
  if (node.metadata.deletionTimestamp || nodeClaim.metadata.deletionTimestamp) {
    return { repairNow: false, why: 'the node is being deleted' };
  }
  if (isMarkedForDisruption(nodeClaim) || hasDisruptedTaint(node)) {
    return { repairNow: false, why: 'the node is already being disrupted' };
  }
  return { repairNow: true, nodePool, nodeClaim, match };
}
