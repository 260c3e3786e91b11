// The sweep step that publishes Karpenter's state gauges from the view the sweep already holds (no extra
// reads): NodePool usage and limits, Node allocatable, NodeClaim condition counts, and build info. Last in
// the list, so the gauges describe the cluster after this sweep's writes. A sweep confined to some
// NodeClaims (nodeClaimSelector) sees only part of the cluster and publishes nothing, as it writes no
// NodePool status. The per-node gauges (Node allocatable, NodeClaim condition counts) are published
// only with METRICS_PER_NODE=true: otherwise the export would grow with the cluster.
import { clusterGauges } from '../../../decisions/cluster-gauges.js';
import { buildInfoLabels } from '../../../observability/build-info.js';
import { publishedGauges } from '../../../observability/series-budget.js';
import { providerIdKey } from '../../cluster/snapshot.js';
import type { SweepStep } from '../../sweep-step/sweep-step.js';

export const metricsStep: SweepStep = {
  name: 'metrics',
  async run(context) {
    const report = { step: 'metrics', examined: 0, acted: 0, failed: 0 };
    if (context.nodeClaimSelector) return report;
    const { nodePools, nodes } = context.view.snapshot;
    const nodeClaims = context.view.nodeClaims();
    const claimed = new Set(
      nodeClaims.flatMap((c) => (c.status?.providerID ? [providerIdKey(c.status.providerID)] : [])),
    );
    const gauges = publishedGauges(
      clusterGauges({
        nodePools,
        nodeClaims,
        nodes,
        isManaged: (node) =>
          Boolean(node.spec.providerID && claimed.has(providerIdKey(node.spec.providerID))),
      }),
      context.deps.settings.metricsPerNode,
    );
    const { metrics } = context.deps;
    metrics.setGauge('karpenter_build_info', [{ labels: buildInfoLabels(), value: 1 }]);
    metrics.setGauge('karpenter_nodepools_usage', gauges.karpenter_nodepools_usage);
    metrics.setGauge('karpenter_nodepools_limit', gauges.karpenter_nodepools_limit);
    metrics.setGauge('karpenter_nodes_allocatable', gauges.karpenter_nodes_allocatable);
    metrics.setGauge(
      'operator_nodeclaim_status_condition_count',
      gauges.operator_nodeclaim_status_condition_count,
    );
    return { ...report, examined: nodePools.length + nodes.length + nodeClaims.length };
  },
};
