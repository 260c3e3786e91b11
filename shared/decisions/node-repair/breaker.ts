// The safety breaker: repair stops when more than 20% of a NodePool's Nodes (or, for a NodeClaim of no
// NodePool, of the cluster's) are unhealthy, since so many at once is more likely a fault of the
// cluster (a network partition, a bad image, the API server) than of the nodes, and replacing them all
// would make it worse. Upstream's rule exactly: the threshold is 20% of the Nodes rounded up, and the
// breaker holds when the unhealthy count is above it (so 1 of 3 may be repaired, 3 of 10 may not).
import type { Node } from '../../models/kube.js';
import { isUnhealthy, type RepairPolicy } from './policies.js';

export const ALLOWED_UNHEALTHY_PERCENT = 20;

export interface BreakerVerdict {
  /** Repair may go on. */
  healthy: boolean;
  unhealthy: number;
  total: number;
  /** The most Nodes that may be unhealthy with repair still going on. */
  threshold: number;
}

/** Upstream's intstr.GetScaledValueFromIntOrPercent("20%", total, roundUp: true). */
export function unhealthyThreshold(total: number): number {
  return Math.ceil((ALLOWED_UNHEALTHY_PERCENT * total) / 100);
}

export function breakerVerdict(nodes: readonly Node[], policies: readonly RepairPolicy[]): BreakerVerdict {
  const unhealthy = nodes.filter((node) => isUnhealthy(node, policies)).length;
  const threshold = unhealthyThreshold(nodes.length);
  return { healthy: unhealthy <= threshold, unhealthy, total: nodes.length, threshold };
}

/** Upstream's NodeRepairBlocked messages, word for word (the cluster's has upstream's "then"). */
export function breakerMessage(scope: 'nodepool' | 'cluster'): string {
  return scope === 'nodepool'
    ? `more than ${ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the nodepool`
    : `more then ${ALLOWED_UNHEALTHY_PERCENT}% nodes are unhealthy in the cluster`;
}
