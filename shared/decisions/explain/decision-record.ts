// What the app decided, and why, kept so a user can ask afterwards: one record per provisioning window
// (every pod it considered: where it was placed, or per NodePool the first constraint that excluded it)
// and one per disruption pass of a NodePool (every candidate's decision and its cause; every command with
// its $/h before and after and the pods it moves). Plain data, built by pure functions next to the
// decisions themselves, written once per window or pass by the lifecycle, read by `explain`.
//
// The cause names are stable identifiers (they are metric labels and the CLI groups by them); the message
// beside each is the one line a user reads, the same text the pod's or node's Event carries.

/** Why a NodePool could not take a pod: the first constraint that excluded it, in the solve's order. */
export type ExclusionCause =
  /** The pod's node selector or required node affinity conflicts with the NodePool's requirements. */
  | 'Requirement'
  /** A NodePool taint the pod does not tolerate. */
  | 'Taint'
  /** Every instance type that fits would exceed the NodePool's `spec.limits`. */
  | 'Limit'
  /** Instance types fit, but no offering is left after failure memory (unavailable offerings) or quota. */
  | 'NoOffering'
  /** Topology spread, pod affinity or anti-affinity leaves no domain the NodePool offers. */
  | 'Topology'
  /** A host port the pod asks for is taken on every option (by a DaemonSet or another pod). */
  | 'HostPort'
  /** The pod's volumes are bound to a zone the NodePool does not offer. */
  | 'VolumeZone'
  /** The pod would fit an empty node, but not beside the DaemonSets that land on every node. */
  | 'DaemonSetOverhead'
  /** No instance type is big enough for the pod's requests. */
  | 'Resources'
  /** The NodePool's `minValues` cannot be met by the instance types left. */
  | 'MinValues'
  /** The NodePool cannot launch at all: its node class is missing or not Ready, or the pool is invalid. */
  | 'NodePoolNotReady'
  /** No NodePool exists (or none the provisioning selector admits). */
  | 'NoNodePool'
  /** The pod itself cannot be simulated (invalid spec, no requests to read). */
  | 'InvalidPod';

export interface PodExclusion {
  nodePool: string;
  cause: ExclusionCause;
  message: string;
}

/** Where a pod was placed in a provisioning window, or why it was placed nowhere. */
export interface PodDecision {
  /** `namespace/name`. */
  pod: string;
  uid: string;
  placed?: { kind: 'Node' | 'NodeClaim'; name: string; new: boolean };
  /** Per NodePool that was asked, in order; present only when the pod was placed nowhere. */
  excluded?: PodExclusion[];
  /** Set when the pod had no room on the existing nodes either (how many were considered). */
  existingNodesFull?: number;
}

/** A NodeClaim a provisioning window created. */
export interface LaunchDecision {
  nodeClaim: string;
  nodePool: string;
  /** The cheapest instance types it may launch as, cheapest first (at most 5). */
  instanceTypes: string[];
  /** Zones it may launch in, when the solve narrowed them. */
  zones?: string[];
  capacityTypes?: string[];
  /** The cheapest offering's price, USD/h. */
  pricePerHour: number;
  /** `namespace/name` of the real pods it was opened for. */
  pods: string[];
  /** MIN_VALUES_POLICY=BestEffort lowered a requirement's minValues to what the options have. */
  minValuesRelaxed?: true;
}

export interface ProvisioningRecord {
  kind: 'provisioning';
  /** The window's ID. */
  id: string;
  /** ISO time the window was solved. */
  at: string;
  pods: PodDecision[];
  launches: LaunchDecision[];
  /** Pods left out of `pods` to keep the record bounded (MAX_RECORD_SUBJECTS). */
  omittedPods?: number;
}

/** Why a node is, or is not, disrupted by a method in a pass. */
export type CandidateCause =
  /** Chosen: a command disrupts it. */
  | 'Disrupted'
  /** The NodePool's budget for the method's reason allows no more now. */
  | 'Budget'
  /** `karpenter.sh/do-not-disrupt` on the node or its pods. */
  | 'DoNotDisrupt'
  /** A PodDisruptionBudget allows no eviction of one of its pods. */
  | 'PDB'
  /** The NodePool's consolidateAfter has not elapsed since the node's pods last changed. */
  | 'ConsolidateAfter'
  /** Balanced consolidation: the saving does not pay for the disruption (score below threshold). */
  | 'BalancedScore'
  /** A command for the node failed recently and is held until a dependency changes or the backoff ends. */
  | 'CommandBackoff'
  /** Consolidation found no cheaper way to run its pods. */
  | 'NothingCheaper'
  /** The node is not initialized yet, or already disrupting, or deleting. */
  | 'NotReady'
  /** The pods on the node could not be placed anywhere else. */
  | 'PodsCannotMove'
  /** The method does not apply (policy, disruption disabled for the reason, not drifted, not expired). */
  | 'NotApplicable'
  /** A pending pod is nominated to the node: the scheduler counts on its room. */
  | 'Nominated';

export interface CandidateDecision {
  nodeClaim: string;
  node?: string;
  /** The method that judged it (emptiness, drift, single-node-consolidation, …). */
  method: string;
  decision: 'disrupt' | 'keep';
  cause: CandidateCause;
  message: string;
}

export interface CommandDecision {
  method: string;
  /** The disruption reason (Empty, Drifted, Underutilized, Expired, …). */
  reason: string;
  candidates: string[];
  /** The replacements' cheapest instance types (empty: a delete). */
  replacements: string[];
  pricePerHourBefore: number;
  pricePerHourAfter: number;
  /** `namespace/name` of the pods the command moves. */
  podsMoved: string[];
}

export interface DisruptionRecord {
  kind: 'disruption';
  /** `<NodePool>-<ISO time>`: one pass of one NodePool. */
  id: string;
  at: string;
  nodePool: string;
  candidates: CandidateDecision[];
  commands: CommandDecision[];
  omittedCandidates?: number;
}

export type DecisionRecord = ProvisioningRecord | DisruptionRecord;

/** A record keeps at most this many pods or candidates; the rest are counted, not listed. */
export const MAX_RECORD_SUBJECTS = 500;

/** Where the lifecycle writes its records and `explain` reads them. */
export interface DecisionRecords {
  /** Once per window or pass; a failure is logged by the caller and never fails the decision itself. */
  write(record: DecisionRecord): Promise<void>;
  /** The newest records of a kind, newest first, at most `limit`. */
  recent(kind: DecisionRecord['kind'], limit: number): Promise<DecisionRecord[]>;
}
