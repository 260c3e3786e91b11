// The nodes a disruption pass kept, counted per cause where an operator looks without reading events:
// the gauge karpenter_nodepools_disruption_blocked_candidates{nodepool, cause} and the NodePool's
// status.disruptionBlocked. Set once per pass of a NodePool. The gauge's series are replaced as a whole
// (metrics.ts setGauge), so every NodePool's last counts are kept here per Metrics instance; a cause that
// kept nodes before and none now is reported as 0 rather than vanishing, so a graph shows it going away.
import type { BlockedCount } from '../../decisions/explain/disruption-record.js';
import type { NodePool } from '../../models/karpenter.js';
import type { GaugeSeries, Metrics } from '../../observability/metrics.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { reconcileDisruptionBlocked } from '../status/nodepool-status.js';

export const BLOCKED_CANDIDATES_GAUGE = 'karpenter_nodepools_disruption_blocked_candidates';

const lastCounts = new WeakMap<Metrics, Map<string, Map<string, number>>>();

/** Sets the NodePool's series of the gauge; the other NodePools' stay as their last pass left them. */
export function setBlockedCandidatesGauge(
  metrics: Metrics,
  nodePool: string,
  counts: readonly BlockedCount[],
): void {
  let pools = lastCounts.get(metrics);
  if (!pools) {
    pools = new Map();
    lastCounts.set(metrics, pools);
  }
  const next = new Map<string, number>();
  for (const cause of pools.get(nodePool)?.keys() ?? []) next.set(cause, 0);
  for (const { cause, count } of counts) next.set(cause, count);
  pools.set(nodePool, next);
  metrics.setGauge(BLOCKED_CANDIDATES_GAUGE, seriesOf(pools));
}

function seriesOf(pools: ReadonlyMap<string, ReadonlyMap<string, number>>): GaugeSeries[] {
  const series: GaugeSeries[] = [];
  for (const [pool, causes] of pools) {
    for (const [cause, value] of causes) series.push({ labels: { nodepool: pool, cause }, value });
  }
  return series;
}

/** Forgets the NodePools not in `current` (deleted, or no longer managed): their series go away. */
export function retainBlockedCandidatesPools(metrics: Metrics, current: ReadonlySet<string>): void {
  const pools = lastCounts.get(metrics);
  if (!pools || [...pools.keys()].every((p) => current.has(p))) return;
  for (const pool of [...pools.keys()]) if (!current.has(pool)) pools.delete(pool);
  metrics.setGauge(BLOCKED_CANDIDATES_GAUGE, seriesOf(pools));
}

/** The pass's counts on the gauge and, when they changed, on the NodePool's status. */
export async function publishBlockedCandidates(
  deps: Pick<LifecycleDependencies, 'metrics' | 'objects'>,
  nodePool: NodePool,
  counts: readonly BlockedCount[],
): Promise<void> {
  setBlockedCandidatesGauge(deps.metrics, nodePool.metadata.name, counts);
  await reconcileDisruptionBlocked(deps, nodePool, counts);
}
