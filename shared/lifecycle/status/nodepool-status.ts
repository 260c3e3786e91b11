// Keeps a NodePool's status as Karpenter does: status.nodes and status.resources from its NodeClaims and
// their Nodes, NodeClassReady from its AKSNodeClass, and Ready from ValidationSucceeded and
// NodeClassReady. Writes only when something changed, guarded by the resourceVersion it read.
import { desiredNodePoolStatus } from '../../decisions/nodepool-status.js';
import { plainEqual } from '../../decisions/plain-equal.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../models/index.js';
import type { Node } from '../../models/kube.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { writeStatus, type StatusWrite } from './status-write.js';

export async function reconcileNodePoolStatus(
  deps: Pick<LifecycleDependencies, 'objects' | 'now'>,
  nodePool: NodePool,
  pool: { nodeClaims: readonly NodeClaim[]; nodesOf: (nodeClaim: NodeClaim) => readonly Node[] },
  nodeClass: AKSNodeClass | undefined,
): Promise<StatusWrite<NodePool>> {
  const desired = desiredNodePoolStatus({ nodePool, ...pool, nodeClass, now: deps.now() });
  const current = nodePool.status ?? {};
  if (
    current.nodes === desired.nodes &&
    plainEqual(current.resources ?? {}, desired.resources) &&
    plainEqual(current.conditions ?? [], desired.conditions)
  ) {
    return { object: nodePool, written: false };
  }
  return writeStatus(nodePool, desired, (name, patch) =>
    deps.objects.nodePools.mergePatchStatus(name, patch),
  );
}
