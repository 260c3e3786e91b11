// Every metric the app emits, named after Karpenter's (pkg/metrics in kubernetes-sigs/karpenter, and the
// former lifecycle counters it replaced with status-condition metrics in 2024), with Karpenter's label
// names (`nodepool`, `reason`, …). Where Karpenter has no equivalent the name follows its pattern and the
// description says so. The workbook and alert queries in infra/monitoring use these names.

export type MetricKind = 'counter' | 'histogram';

export interface MetricDefinition {
  kind: MetricKind;
  description: string;
  unit?: string;
  /** Histogram bucket boundaries (Karpenter's duration buckets where it has the metric). */
  buckets?: readonly number[];
}

const durationBuckets = [1, 5, 10, 20, 30, 45, 60, 90, 120, 180, 240, 300, 600, 900] as const;

export const metricCatalog = {
  karpenter_nodeclaims_created_total: {
    kind: 'counter',
    description:
      'NodeClaims created, by nodepool and reason (provisioning, static replicas, or the disruption reason of a replacement).',
  },
  karpenter_nodeclaims_launch_started_total: {
    kind: 'counter',
    description:
      'VM creations Azure accepted for a NodeClaim. Not a Karpenter metric: Karpenter launches synchronously, here the launch returns once the PUT is accepted.',
  },
  karpenter_nodeclaims_launched_total: {
    kind: 'counter',
    description:
      "NodeClaims whose VM was created (Launched=True). Karpenter's name until its status-condition metrics replaced it.",
  },
  karpenter_nodeclaims_registered_total: {
    kind: 'counter',
    description: "NodeClaims whose Node registered (Registered=True). Karpenter's former name.",
  },
  karpenter_nodeclaims_initialized_total: {
    kind: 'counter',
    description: "NodeClaims whose Node became ready for pods (Initialized=True). Karpenter's former name.",
  },
  karpenter_nodes_created_total: {
    kind: 'counter',
    description: 'Nodes created, counted at registration as Karpenter does.',
  },
  karpenter_nodeclaims_terminated_total: {
    kind: 'counter',
    description: 'NodeClaims whose termination finished (VM deleted, finalizer removed).',
  },
  karpenter_nodes_terminated_total: {
    kind: 'counter',
    description: 'Nodes deleted by termination.',
  },
  karpenter_nodeclaims_disrupted_total: {
    kind: 'counter',
    description:
      'NodeClaims disrupted, by nodepool and reason: drifted (replaced), registration_timeout (liveness). outcome says whether a replacement took over.',
  },
  karpenter_voluntary_disruption_decisions_total: {
    kind: 'counter',
    description:
      'Disruption decisions taken, by decision (delete, replace), reason (drifted, empty, underutilized) and consolidation_type (empty, single, multi; empty string for drift).',
  },
  karpenter_cloudprovider_errors_total: {
    kind: 'counter',
    description:
      'Launch failures by error (the classified reason, e.g. ZonalAllocationFailure), with method=Create, provider=azure.',
  },
  karpenter_nodeclaims_instance_creation_duration_seconds: {
    kind: 'histogram',
    unit: 's',
    description:
      "Time from the VM PUT to the end of its creation operation. Named after Karpenter's karpenter_nodeclaims_instance_termination_duration_seconds.",
    buckets: durationBuckets,
  },
  karpenter_nodeclaims_registration_duration_seconds: {
    kind: 'histogram',
    unit: 's',
    description: "Time from the NodeClaim's creation (the launch request) to Registered, per nodepool.",
    buckets: durationBuckets,
  },
  karpenter_provisioner_scheduling_duration_seconds: {
    kind: 'histogram',
    unit: 's',
    description:
      "Duration of one scheduling simulation over the pending pods of a provisioning window (Karpenter's name).",
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
  },
  karpenter_consolidation_score: {
    kind: 'histogram',
    unit: '1',
    description:
      "Score of Balanced consolidation moves (savings share ÷ disruption share), by decision (approved, rejected), nodepool and policy (Karpenter's name and buckets).",
    buckets: [0.1, 0.25, 0.33, 0.5, 1, 2, 5, 10],
  },
  karpenter_consolidation_moves_total: {
    kind: 'counter',
    description:
      "Balanced consolidation moves scored, by decision (approved, rejected), nodepool and policy (Karpenter's name).",
  },
} as const satisfies Record<string, MetricDefinition>;

export type MetricName = keyof typeof metricCatalog;
