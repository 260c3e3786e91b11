// Keeps a NodePool's status as Karpenter does: status.nodes and status.resources from its NodeClaims and
// their Nodes, NodeClassReady from its AKSNodeClass, and Ready from ValidationSucceeded and
// NodeClassReady; and the rollout's view of it: observedGeneration, upToDateNodes, readyNodes and the
// RolledOut condition. Writes only when something changed, guarded by the resourceVersion it read.
// Also status.disruptionBlocked, which the disruption step counts once per pass (its only writer).
import {
  desiredNodePoolStatus,
  disruptionBlockedStatus,
  disruptionBlockedUnchanged,
} from '../../decisions/nodepool-status.js';
import { isNotFound } from '../../kube/errors.js';
import { plainEqual } from '../../decisions/plain-equal.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../models/index.js';
import type { Node } from '../../models/kube.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeStatus, type StatusWrite } from './status-write.js';

export async function reconcileNodePoolStatus(
  deps: Pick<LifecycleDependencies, 'objects' | 'now' | 'settings'>,
  nodePool: NodePool,
  pool: { nodeClaims: readonly NodeClaim[]; nodesOf: (nodeClaim: NodeClaim) => readonly Node[] },
  nodeClass: AKSNodeClass | undefined,
): Promise<StatusWrite<NodePool>> {
  const desired = desiredNodePoolStatus({
    nodePool,
    ...pool,
    nodeClass,
    now: deps.now(),
    defaultRolloutPolicy: deps.settings.rollout.policy,
  });
  const current = nodePool.status ?? {};
  if (
    current.nodes === desired.nodes &&
    current.observedGeneration === desired.observedGeneration &&
    current.upToDateNodes === desired.upToDateNodes &&
    current.readyNodes === desired.readyNodes &&
    plainEqual(current.resources ?? {}, desired.resources) &&
    plainEqual(current.conditions ?? [], desired.conditions)
  ) {
    return { object: nodePool, written: false };
  }
  return writeStatus(nodePool, desired, (name, patch) =>
    deps.objects.nodePools.mergePatchStatus(name, patch),
  );
}

/**
 * Writes status.disruptionBlocked when the pass's counts differ from the NodePool's. Not guarded by the
 * resourceVersion: the disruption step is the field's only writer and the patch names no other field, so
 * a status write of the sweep's status step in between (which bumps the version) takes nothing away.
 */
export async function reconcileDisruptionBlocked(
  deps: Pick<LifecycleDependencies, 'objects'>,
  nodePool: NodePool,
  counts: readonly { cause: string; count: number }[],
): Promise<boolean> {
  const desired = disruptionBlockedStatus(counts);
  if (disruptionBlockedUnchanged(nodePool.status?.disruptionBlocked, desired)) return false;
  try {
    await deps.objects.nodePools.mergePatchStatus(nodePool.metadata.name, {
      status: { disruptionBlocked: desired },
    });
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}
