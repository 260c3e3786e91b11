// How many time series the app exports for a cluster of a given shape, computed from the metric catalog,
// so the telemetry bill is a stated number and not a surprise. Telemetry is billed per sample (managed
// Prometheus) or per row (Application Insights), and a label whose values grow with the cluster multiplies
// every interval's export; this module is where each label's number of values is declared (the type
// requires a domain for every label of every metric, so a new label cannot go uncounted) and where the
// budget that docs/metrics.md states is kept. test/unit/series-budget.test.ts holds the two together.
import { clusterGauges, type ClusterGaugeInput, type ClusterGauges } from '../decisions/cluster-gauges.js';
import { metricCatalog, type MetricDefinition, type MetricName } from './metric-catalog.js';

/**
 * The values a label takes: a fixed number of them, or one per NodePool, per zone of the region (and
 * the regional '' of a non-zonal offering), per capacity type. Per-node labels only appear on the gauges,
 * which are counted from the real gauge computation instead.
 */
export type LabelDomain = number | 'nodepool' | 'zone' | 'capacity_type';

type Domains = {
  [N in MetricName]: { [L in (typeof metricCatalog)[N]['labels'][number]]: LabelDomain };
};

/** Reasons the app records on karpenter_nodeclaims_created_total: provisioning, static and the replacements'. */
const CREATED_REASONS = 6; // provisioning, static, drifted, underutilized, empty, unhealthy
/** karpenter_nodeclaims_disrupted_total reasons: the disruption reasons, expiration and liveness. */
const DISRUPTED_REASONS = 6; // drifted, underutilized, empty, unhealthy, expired, registration_timeout
/** LaunchFailureReason (shared/cloudprovider/azure/decisions/launch-errors.ts) and InsufficientCapacity. */
const LAUNCH_ERRORS = 12;
/** Launched, Registered, Initialized. */
const RECORDED_CONDITIONS = 3;
/** Node repair's conditions (the Azure provider's repair policies). */
const REPAIR_CONDITIONS = 3; // ready, node_healthy, preemption_scheduled
/** Images a NodePool runs at once: the current one and, during a rollout, the one it replaces. */
const IMAGES_PER_NODEPOOL = 2;

/** How a rollout ends: rolled_out, rolled_back, halted. */
const ROLLOUT_OUTCOMES = 3;
/** The rollout's health gates (shared/decisions/rollout-gates.ts). */
const ROLLOUT_GATES = 4;

/** The causes a disruption pass keeps a node for (decision-record.ts CandidateCause, less Disrupted, NotApplicable). */
const BLOCK_CAUSES = 10;

/** Every label's domain (the gauges clusterGauges computes are counted from it instead). */
export const labelDomains: Domains = {
  karpenter_build_info: { version: 1, goversion: 1, goarch: 1, commit: 1 },
  karpenter_nodeclaims_created_total: {
    // Every reason with min_values_relaxed "false", and provisioning once more with "true" (NodeClaims
    // MIN_VALUES_POLICY=BestEffort created with a minValues lowered): the only reason that relaxes.
    reason: CREATED_REASONS + 1,
    nodepool: 'nodepool',
    min_values_relaxed: 1,
  },
  karpenter_nodeclaims_terminated_total: {
    nodepool: 'nodepool',
    capacity_type: 'capacity_type',
    zone: 'zone',
  },
  karpenter_nodeclaims_disrupted_total: {
    reason: DISRUPTED_REASONS,
    nodepool: 'nodepool',
    capacity_type: 'capacity_type',
    // The NodePool's own policy, or '' (liveness, repair, drift of an older command).
    consolidation_policy: 2,
    termination_mode: 2,
  },
  karpenter_nodeclaims_unhealthy_disrupted_total: {
    condition: REPAIR_CONDITIONS,
    nodepool: 'nodepool',
    capacity_type: 'capacity_type',
    image_id: IMAGES_PER_NODEPOOL,
  },
  operator_nodeclaim_status_condition_transitions_total: {
    type: RECORDED_CONDITIONS,
    status: 1,
    reason: 1,
    karpenter_sh_nodepool: 'nodepool',
    // Each NodePool names one AKSNodeClass.
    karpenter_azure_com_aksnodeclass: 1,
  },
  operator_nodeclaim_status_condition_transition_seconds: {
    type: RECORDED_CONDITIONS,
    status: 1,
    karpenter_sh_nodepool: 'nodepool',
    karpenter_azure_com_aksnodeclass: 1,
  },
  operator_nodeclaim_status_condition_count: {
    namespace: 1,
    name: 1,
    type: 1,
    status: 1,
    reason: 1,
    karpenter_sh_nodepool: 1,
    karpenter_azure_com_aksnodeclass: 1,
  },
  karpenter_nodes_created_total: { nodepool: 'nodepool' },
  karpenter_nodes_terminated_total: { nodepool: 'nodepool' },
  karpenter_nodes_allocatable: {
    nodepool: 1,
    instance_type: 1,
    capacity_type: 1,
    zone: 1,
    region: 1,
    arch: 1,
    os: 1,
    node_name: 1,
    phase: 1,
    managed: 1,
    resource_type: 1,
  },
  karpenter_nodepools_usage: { resource_type: 1, nodepool: 1 },
  karpenter_nodepools_limit: { resource_type: 1, nodepool: 1 },
  karpenter_voluntary_disruption_decisions_total: { decision: 2, reason: 3, consolidation_type: 4 },
  karpenter_cloudprovider_errors_total: {
    controller: 1,
    method: 1,
    provider: 1,
    error: LAUNCH_ERRORS,
    nodepool: 'nodepool',
  },
  karpenter_scheduler_scheduling_duration_seconds: {},
  karpenter_nodeclaims_launch_started_total: { nodepool: 'nodepool' },
  karpenter_nodeclaims_launch_attempts_total: { nodepool: 'nodepool', outcome: 2 },
  karpenter_nodeclaims_instance_creation_duration_seconds: { nodepool: 'nodepool' },
  karpenter_nodepools_rollouts_total: { nodepool: 'nodepool', outcome: ROLLOUT_OUTCOMES },
  karpenter_nodepools_rollout_waves_total: { nodepool: 'nodepool' },
  karpenter_nodepools_rollout_gate_failures_total: { nodepool: 'nodepool', gate: ROLLOUT_GATES },
  karpenter_nodepools_disruption_blocked_candidates: { nodepool: 'nodepool', cause: BLOCK_CAUSES },
  karpenter_consolidation_score: { decision: 2, nodepool: 'nodepool', policy: 1 },
  karpenter_consolidation_moves_total: { decision: 2, nodepool: 'nodepool', policy: 1 },
};

export interface ClusterShape {
  nodePools: number;
  /** Zones of the region (3 in most); the regional '' adds one value. */
  zones: number;
}

const CAPACITY_TYPES = 3; // on-demand, spot, reserved

function domainSize(domain: LabelDomain, shape: ClusterShape): number {
  if (typeof domain === 'number') return domain;
  if (domain === 'nodepool') return shape.nodePools;
  if (domain === 'zone') return shape.zones + 1;
  return CAPACITY_TYPES;
}

/**
 * Samples one series of a metric is in Prometheus: a histogram is its buckets, +Inf, _sum and _count.
 * Application Insights stores any series as one row per export.
 */
export function samplesPerSeries(name: MetricName): number {
  const definition = metricCatalog[name];
  return definition.kind === 'histogram' ? (definition.buckets?.length ?? 0) + 3 : 1;
}

/** The most label sets a counter or histogram can reach in a cluster of this shape. */
export function eventSeriesBound(name: MetricName, shape: ClusterShape): number {
  const domains: Readonly<Record<string, LabelDomain>> = labelDomains[name];
  let product = 1;
  for (const domain of Object.values(domains)) product *= domainSize(domain, shape);
  return product;
}

export interface SeriesCount {
  /** Label sets (Application Insights rows per export). */
  series: number;
  /** Prometheus samples per scrape or export (histograms count every bucket). */
  samples: number;
  byMetric: Partial<Record<MetricName, number>>;
}

/**
 * Every series the app can export for this cluster: the gauges exactly as the sweep computes them from
 * the cluster (per-node gauges only when `perNode`), the counters and histograms at their bound.
 */
export function exportedSeries(
  cluster: ClusterGaugeInput,
  shape: ClusterShape,
  options: { perNode: boolean },
): SeriesCount {
  const gauges = publishedGauges(clusterGauges(cluster), options.perNode);
  const byMetric: Partial<Record<MetricName, number>> = { karpenter_build_info: 1 };
  for (const [name, points] of Object.entries(gauges) as [MetricName, readonly unknown[]][])
    byMetric[name] = points.length;
  // A gauge the sweep does not compute from the cluster (the disruption pass's) counts at its bound too.
  for (const name of Object.keys(metricCatalog) as MetricName[]) {
    if (metricCatalog[name].kind !== 'gauge' || byMetric[name] === undefined) {
      byMetric[name] = eventSeriesBound(name, shape);
    }
  }
  let series = 0;
  let samples = 0;
  for (const [name, count] of Object.entries(byMetric) as [MetricName, number][]) {
    series += count;
    samples += count * samplesPerSeries(name);
  }
  return { series, samples, byMetric };
}

/** The gauges a sweep publishes: the per-node ones (the catalog's `perNode`) are empty unless enabled. */
export function publishedGauges(gauges: ClusterGauges, perNode: boolean): ClusterGauges {
  if (perNode) return gauges;
  const definitions: Readonly<Record<string, MetricDefinition>> = metricCatalog;
  const published = { ...gauges };
  for (const name of Object.keys(published) as (keyof ClusterGauges)[])
    if (definitions[name]?.perNode) published[name] = [];
  return published;
}

/**
 * The budget docs/metrics.md states, in Prometheus samples per export: a fixed part, a part per NodePool,
 * and (only with METRICS_PER_NODE=true) a part per node.
 */
export const SERIES_BUDGET = { fixed: 100, perNodePool: 250, perNode: 12 } as const;
