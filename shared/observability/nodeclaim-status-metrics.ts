// NodeClaim condition transitions as operatorpkg's status controller reports them upstream: one count per
// transition of a condition type to a status (`operator_nodeclaim_status_condition_transitions_total`),
// and how long the condition had been in its previous status (`..._transition_seconds`), labeled with the
// NodeClaim's NodePool and AKSNodeClass as Karpenter labels them. They replace the v0.x counters
// nodeclaims_launched/registered/initialized_total, which upstream retired for these.
import { nodeClaimMetricLabels } from '../decisions/cluster-gauges.js';
import type { NodeClaim } from '../models/index.js';
import type { Metrics } from './metrics.js';

export interface ObservedTransition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  /** When the condition entered the status it leaves now (its last transition, or the NodeClaim's creation). */
  previousSince: string | undefined;
  previousStatus: 'True' | 'False' | 'Unknown';
  at: Date;
}

export function recordNodeClaimTransition(
  metrics: Metrics,
  nodeClaim: Pick<NodeClaim, 'metadata' | 'spec'>,
  transition: ObservedTransition,
): void {
  const objectLabels = nodeClaimMetricLabels(nodeClaim);
  metrics.increment('operator_nodeclaim_status_condition_transitions_total', {
    type: transition.type,
    status: transition.status,
    reason: transition.reason,
    ...objectLabels,
  });
  const since = Date.parse(transition.previousSince ?? nodeClaim.metadata.creationTimestamp ?? '');
  if (!Number.isFinite(since)) return;
  metrics.observe(
    'operator_nodeclaim_status_condition_transition_seconds',
    Math.max(0, (transition.at.getTime() - since) / 1000),
    { type: transition.type, status: transition.previousStatus, ...objectLabels },
  );
}
