// The state gauges Karpenter reports, computed from one view of the cluster: what each NodePool has
// provisioned and may provision (`karpenter_nodepools_usage`, `_limit`), what each Node can hold
// (`karpenter_nodes_allocatable`), and the conditions every NodeClaim is in
// (`operator_nodeclaim_status_condition_count`). Labels follow upstream: resource quantities in base units
// (cores, bytes, counts), well-known node labels in snake_case, NodeClaim object labels as operatorpkg
// names them. Pure: a view in, series out.
import type { NodeClaim, NodePool } from '../models/index.js';
import { WellKnown } from '../models/karpenter.js';
import type { Node } from '../models/kube.js';
import { tryParseQuantity } from './quantity.js';

export interface GaugePoint {
  labels: Record<string, string>;
  value: number;
}

export interface ClusterGauges {
  karpenter_nodepools_usage: GaugePoint[];
  karpenter_nodepools_limit: GaugePoint[];
  karpenter_nodes_allocatable: GaugePoint[];
  operator_nodeclaim_status_condition_count: GaugePoint[];
}

export interface ClusterGaugeInput {
  nodePools: readonly NodePool[];
  nodeClaims: readonly NodeClaim[];
  nodes: readonly Node[];
  /** Whether a Node belongs to a NodeClaim of this app (Karpenter's `managed` label). */
  isManaged(node: Node): boolean;
}

/** Karpenter's well-known node labels and the metric label each is reported under. */
const wellKnownNodeLabels: readonly (readonly [string, string])[] = [
  [WellKnown.nodePoolLabel, 'nodepool'],
  [WellKnown.instanceTypeLabel, 'instance_type'],
  [WellKnown.capacityTypeLabel, 'capacity_type'],
  [WellKnown.zoneLabel, 'zone'],
  [WellKnown.regionLabel, 'region'],
  [WellKnown.archLabel, 'arch'],
  [WellKnown.osLabel, 'os'],
];

export interface NodeClaimObjectLabels {
  karpenter_sh_nodepool: string;
  karpenter_azure_com_aksnodeclass: string;
}

/** The NodeClaim labels operatorpkg adds to NodeClaim status metrics, under their Prometheus names. */
export function nodeClaimMetricLabels(
  nodeClaim: Pick<NodeClaim, 'metadata' | 'spec'>,
): NodeClaimObjectLabels {
  const labels = nodeClaim.metadata.labels ?? {};
  return {
    karpenter_sh_nodepool: labels[WellKnown.nodePoolLabel] ?? '',
    karpenter_azure_com_aksnodeclass:
      labels['karpenter.azure.com/aksnodeclass'] ?? nodeClaim.spec.nodeClassRef.name,
  };
}

/**
 * The labels upstream's NodeClaim lifecycle counters carry from the NodeClaim itself
 * (`karpenter_nodeclaims_terminated_total`, and the capacity type of `_disrupted_total`).
 */
export function nodeClaimLifecycleLabels(nodeClaim: Pick<NodeClaim, 'metadata'>): {
  nodepool: string;
  capacity_type: string;
  zone: string;
} {
  const labels = nodeClaim.metadata.labels ?? {};
  return {
    nodepool: labels[WellKnown.nodePoolLabel] ?? '',
    capacity_type: labels[WellKnown.capacityTypeLabel] ?? '',
    zone: labels[WellKnown.zoneLabel] ?? '',
  };
}

function resourcePoints(
  resources: Record<string, string> | undefined,
  labels: Record<string, string>,
): GaugePoint[] {
  return Object.entries(resources ?? {}).flatMap(([resource, quantity]) => {
    const value = tryParseQuantity(quantity);
    return value === undefined ? [] : [{ labels: { ...labels, resource_type: resource }, value }];
  });
}

export function clusterGauges(input: ClusterGaugeInput): ClusterGauges {
  const usage = input.nodePools.flatMap((pool) =>
    resourcePoints(pool.status?.resources, { nodepool: pool.metadata.name }),
  );
  const limit = input.nodePools.flatMap((pool) =>
    resourcePoints(pool.spec.limits, { nodepool: pool.metadata.name }),
  );
  const allocatable = input.nodes.flatMap((node) => {
    const nodeLabels = node.metadata.labels ?? {};
    const labels: Record<string, string> = {
      ...Object.fromEntries(wellKnownNodeLabels.map(([key, metric]) => [metric, nodeLabels[key] ?? ''])),
      node_name: node.metadata.name,
      // core/v1 Node.status.phase is deprecated and unset by kubelet; upstream reports it as it is (empty).
      phase: '',
      managed: String(input.isManaged(node)),
    };
    return resourcePoints(node.status?.allocatable, labels);
  });
  const conditions = input.nodeClaims.flatMap((nodeClaim) => {
    const objectLabels = nodeClaimMetricLabels(nodeClaim);
    return (nodeClaim.status?.conditions ?? []).map((condition) => ({
      labels: {
        namespace: '',
        name: nodeClaim.metadata.name,
        type: condition.type,
        status: condition.status,
        reason: condition.reason,
        ...objectLabels,
      },
      value: 1,
    }));
  });
  return {
    karpenter_nodepools_usage: usage,
    karpenter_nodepools_limit: limit,
    karpenter_nodes_allocatable: allocatable,
    operator_nodeclaim_status_condition_count: conditions,
  };
}
