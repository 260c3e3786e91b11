// Every metric the app emits. Where Karpenter has the concept, the name, labels and help text are
// upstream v1's (kubernetes-sigs/karpenter pkg/metrics and its controllers, awslabs/operatorpkg status
// metrics; the list of upstream names is docs/reference/karpenter-metrics.txt, and a unit test fails on a
// name that is in neither it nor the Azure-specific list below), so an existing Karpenter dashboard and
// its alerts work. The retired v0.x lifecycle counters (nodeclaims_launched/registered/initialized) are
// gone: their concept is `operator_nodeclaim_status_condition_transitions_total{type=...}`, as upstream.
// The workbook, the alert queries and the Grafana dashboard in infra/monitoring use these names.

export type MetricKind = 'counter' | 'histogram' | 'gauge';

export interface MetricDefinition {
  kind: MetricKind;
  description: string;
  /** Label names, as upstream spells them. */
  labels: readonly string[];
  /** `azure`: no upstream metric has the concept; named after Karpenter's pattern, listed in docs/metrics.md. */
  origin: 'upstream' | 'azure';
  unit?: string;
  /** Histogram bucket boundaries (upstream's where it has the metric). */
  buckets?: readonly number[];
  /**
   * Each observation is also a `metric` log record (exact values for the workbook's percentiles). Only
   * for histograms observed a bounded number of times per launch, so log volume follows churn.
   */
  logObservations?: boolean;
  /**
   * A gauge with a series per node or NodeClaim: published only with METRICS_PER_NODE=true, so the
   * default export does not grow with the cluster (docs/metrics.md, "Series budget").
   */
  perNode?: boolean;
}

/** Karpenter's DurationBuckets() (controller-runtime's, with values past 60 s). */
const durationBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25,
  1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60, 120, 150, 300, 450,
  600,
] as const;

/** The buckets Karpenter gives operatorpkg's status controllers: ExponentialBuckets(0.5, 2, 15). */
const conditionBuckets = Array.from({ length: 15 }, (_, i) => 0.5 * 2 ** i);

/** NodeClaim labels operatorpkg copies onto status metrics (toPrometheusLabel of the label keys). */
const nodeClaimObjectLabels = ['karpenter_sh_nodepool', 'karpenter_azure_com_aksnodeclass'] as const;

/** Karpenter's node metric labels: the well-known labels in snake_case, the node's name and phase. */
export const nodeMetricLabels = [
  'nodepool',
  'instance_type',
  'capacity_type',
  'zone',
  'region',
  'arch',
  'os',
  'node_name',
  'phase',
  'managed',
] as const;

export const metricCatalog = {
  karpenter_build_info: {
    kind: 'gauge',
    origin: 'upstream',
    labels: ['version', 'goversion', 'goarch', 'commit'],
    description:
      "A metric with a constant '1' value labeled by version from which karpenter was built. Here goversion is the Node.js version and goarch its architecture.",
  },
  karpenter_nodeclaims_created_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['reason', 'nodepool', 'min_values_relaxed'],
    description:
      'Number of nodeclaims created in total by Karpenter. Labeled by reason the nodeclaim was created, the owning nodepool, and if min values was relaxed for this nodeclaim.',
  },
  karpenter_nodeclaims_terminated_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['nodepool', 'capacity_type', 'zone'],
    description:
      'Number of nodeclaims terminated in total by Karpenter. Labeled by the owning nodepool, capacity type, and zone.',
  },
  karpenter_nodeclaims_disrupted_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['reason', 'nodepool', 'capacity_type', 'consolidation_policy', 'termination_mode'],
    description:
      'Number of nodeclaims disrupted in total by Karpenter. Labeled by reason the nodeclaim was disrupted and the owning nodepool.',
  },
  karpenter_nodeclaims_unhealthy_disrupted_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['condition', 'nodepool', 'capacity_type', 'image_id'],
    description:
      'Number of unhealthy nodeclaims disrupted in total by Karpenter. Labeled by condition on the node was disrupted, the owning nodepool, and the image ID.',
  },
  operator_nodeclaim_status_condition_transitions_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['type', 'status', 'reason', ...nodeClaimObjectLabels],
    description: 'The count of transitions of a given object, type and status.',
  },
  operator_nodeclaim_status_condition_transition_seconds: {
    kind: 'histogram',
    origin: 'upstream',
    unit: 's',
    labels: ['type', 'status', ...nodeClaimObjectLabels],
    description:
      'The amount of time a condition was in a given state before transitioning. e.g. Alarm := P99(Updated=False) > 5 minutes',
    buckets: conditionBuckets,
    logObservations: true,
  },
  operator_nodeclaim_status_condition_count: {
    kind: 'gauge',
    origin: 'upstream',
    labels: ['namespace', 'name', 'type', 'status', 'reason', ...nodeClaimObjectLabels],
    perNode: true,
    description:
      'The number of a condition for a given object, type and status. e.g. Alarm := Available=False > 0',
  },
  karpenter_nodes_created_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['nodepool'],
    description: 'Number of nodes created in total by Karpenter. Labeled by owning nodepool.',
  },
  karpenter_nodes_terminated_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['nodepool'],
    description: 'Number of nodes terminated in total by Karpenter. Labeled by owning nodepool.',
  },
  karpenter_nodes_allocatable: {
    kind: 'gauge',
    origin: 'upstream',
    labels: [...nodeMetricLabels, 'resource_type'],
    perNode: true,
    description: 'Node allocatable are the resources allocatable by nodes.',
  },
  karpenter_nodepools_usage: {
    kind: 'gauge',
    origin: 'upstream',
    labels: ['resource_type', 'nodepool'],
    description:
      'The amount of resources that have been provisioned for a nodepool. Labeled by nodepool name and resource type.',
  },
  karpenter_nodepools_limit: {
    kind: 'gauge',
    origin: 'upstream',
    labels: ['resource_type', 'nodepool'],
    description:
      'Limits specified on the nodepool that restrict the quantity of resources provisioned. Labeled by nodepool name and resource type.',
  },
  karpenter_voluntary_disruption_decisions_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['decision', 'reason', 'consolidation_type'],
    description:
      'Number of disruption decisions performed. Labeled by disruption decision, reason, and consolidation type.',
  },
  karpenter_cloudprovider_errors_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['controller', 'method', 'provider', 'error', 'nodepool'],
    description:
      'Total number of errors returned from CloudProvider calls. Here error is the classified launch reason (e.g. ZonalAllocationFailure).',
  },
  karpenter_scheduler_scheduling_duration_seconds: {
    kind: 'histogram',
    origin: 'upstream',
    unit: 's',
    labels: [],
    description: 'Duration of scheduling simulations used for deprovisioning and provisioning in seconds.',
    buckets: durationBuckets,
  },
  karpenter_nodeclaims_launch_started_total: {
    kind: 'counter',
    origin: 'azure',
    labels: ['nodepool'],
    description:
      'VM creations Azure accepted for a NodeClaim. Karpenter launches synchronously and has no such count; here the launch returns once the PUT is accepted.',
  },
  karpenter_nodeclaims_launch_attempts_total: {
    kind: 'counter',
    origin: 'azure',
    labels: ['nodepool', 'outcome'],
    description:
      'VM creations tried for a NodeClaim, by outcome: succeeded (the VM came up) or failed (the PUT was refused or its creation failed). succeeded ÷ all is the first-attempt launch success rate.',
  },
  karpenter_nodeclaims_instance_creation_duration_seconds: {
    kind: 'histogram',
    origin: 'azure',
    unit: 's',
    labels: ['nodepool'],
    description:
      'Time from the VM PUT to the end of its creation operation, which Karpenter waits for inside Create. Named after karpenter_nodeclaims_instance_termination_duration_seconds.',
    buckets: [1, 5, 10, 20, 30, 45, 60, 90, 120, 180, 240, 300, 600, 900],
    logObservations: true,
  },
  karpenter_nodepools_rollouts_total: {
    kind: 'counter',
    origin: 'azure',
    labels: ['nodepool', 'outcome'],
    description:
      'Rollouts of a NodePool change that ended, by outcome: rolled_out (every node up to date), rolled_back (a node image version rejected and its nodes replaced) or halted (a health gate failed). Karpenter replaces drifted nodes without rollouts.',
  },
  karpenter_nodepools_rollout_waves_total: {
    kind: 'counter',
    origin: 'azure',
    labels: ['nodepool'],
    description: 'Waves of rollouts started, the canary included.',
  },
  karpenter_nodepools_rollout_gate_failures_total: {
    kind: 'counter',
    origin: 'azure',
    labels: ['nodepool', 'gate'],
    description:
      'Rollouts a health gate stopped, by gate: replacement_failed, pod_not_ready, node_unhealthy, pod_restarts.',
  },
  karpenter_nodepools_disruption_blocked_candidates: {
    kind: 'gauge',
    origin: 'azure',
    labels: ['nodepool', 'cause'],
    description:
      "Nodes of a NodePool its last disruption pass kept, by cause (Budget, DoNotDisrupt, PDB, ConsolidateAfter, BalancedScore, CommandBackoff, NothingCheaper, NotReady, PodsCannotMove, Nominated). Karpenter's DisruptionBlocked events say the same per node, without a count.",
  },
  karpenter_consolidation_score: {
    kind: 'histogram',
    origin: 'upstream',
    unit: '1',
    labels: ['decision', 'nodepool', 'policy'],
    description:
      "Score of Balanced consolidation moves (savings share ÷ disruption share), by decision (approved, rejected), nodepool and policy (Karpenter's name and buckets).",
    buckets: [0.1, 0.25, 0.33, 0.5, 1, 2, 5, 10],
  },
  karpenter_consolidation_moves_total: {
    kind: 'counter',
    origin: 'upstream',
    labels: ['decision', 'nodepool', 'policy'],
    description:
      "Balanced consolidation moves scored, by decision (approved, rejected), nodepool and policy (Karpenter's name).",
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricName = keyof typeof metricCatalog;
/** The label set of a metric, exactly its catalog (upstream) labels. */
export type MetricLabelsOf<N extends MetricName> = {
  readonly [L in (typeof metricCatalog)[N]['labels'][number]]: string;
};
export type GaugeName = {
  [N in MetricName]: (typeof metricCatalog)[N]['kind'] extends 'gauge' ? N : never;
}[MetricName];
