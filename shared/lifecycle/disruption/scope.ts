// The NodePools a sweep may act on as a whole. A sweep restricted by a NodeClaim label selector sees only
// some NodeClaims; acting on a NodePool whose NodeClaims it cannot see would, for example, make a static
// NodePool look empty and create a second set of replicas. So such a sweep takes only the NodePools whose
// NodeClaims its selector admits.
import { labelsMatch } from '../../decisions/label-selector.js';
import { isManagedNodePool } from '../../decisions/ownership.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import type { SweepContext } from '../sweep-step/sweep-step.js';

export function nodePoolsInScope(context: Pick<SweepContext, 'view' | 'nodeClaimSelector'>): NodePool[] {
  const selector = context.nodeClaimSelector;
  return context.view.snapshot.nodePools.filter(
    (pool) =>
      isManagedNodePool(pool) &&
      !pool.metadata.deletionTimestamp &&
      (!selector ||
        labelsMatch(selector, {
          ...pool.spec.template.metadata?.labels,
          [WellKnown.nodePoolLabel]: pool.metadata.name,
        })),
  );
}

/** The view's NodeClaims grouped by their karpenter.sh/nodepool label. */
export function nodeClaimsByPool(nodeClaims: readonly NodeClaim[]): Map<string, NodeClaim[]> {
  const byPool = new Map<string, NodeClaim[]>();
  for (const nodeClaim of nodeClaims) {
    const pool = nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel];
    if (!pool) continue;
    const list = byPool.get(pool);
    if (list) list.push(nodeClaim);
    else byPool.set(pool, [nodeClaim]);
  }
  return byPool;
}
