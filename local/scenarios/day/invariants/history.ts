// What the day's invariants read: every recorded object version and request, as plain data, in the order
// they were seen. The scenario fills it while the day plays; the checkers are pure functions of it, so
// small hand-made histories test them (test/unit/day/).
import type { Budget, Node, NodeClaim } from '../../../../shared/models/index.js';
import { WellKnown } from '../../../../shared/models/index.js';
import type { PodView } from '../../../view/recorder.js';

/** A pod as the invariants see it: as the recorder keeps it. */
export type DayPod = PodView;

export interface Version<T> {
  at: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: T;
}

/** One ARM request of the emulator's log, without its body except a PUT's placement. */
export interface ArmRequest {
  at: number;
  method: string;
  kind: string | undefined;
  vmName: string | undefined;
  status: number;
  errorCode: string | undefined;
  /** Answered 429, by Compute's buckets or by the weather's throttle faults. */
  throttled: boolean;
  /** A PUT's placement. */
  placement?: { vmSize: string; zone: string; priority: string };
}

/** A VM creation that ended Failed (the emulator's change feed). */
export interface VmFailure {
  at: number;
  vmName: string;
  code: string;
}

export interface PoolSettings {
  name: string;
  consolidateAfterMs: number;
}

export interface PdbRule {
  /** The pods' `app` label. */
  set: string;
  maxUnavailable?: number;
  minAvailable?: number;
}

/**
 * One version of a PodDisruptionBudget's status as a watch delivered it: what the API server judged each
 * eviction by (it allows one while disruptionsAllowed > 0 and takes one off it, naming the pod in
 * disruptedPods until the PDB controller sees the pod go).
 */
export interface PdbStatusVersion {
  at: number;
  /** The PDB's name, which is its set's `app` label. */
  set: string;
  generation?: number;
  observedGeneration?: number;
  currentHealthy: number;
  desiredHealthy: number;
  disruptionsAllowed: number;
  expectedPods: number;
  /** Pods evicted that the PDB controller has not yet seen deleted. */
  disruptedPods: string[];
}

/** A sample of the API server's own metrics (counters as read, they restart with the process). */
export interface ApiServerSample {
  at: number;
  requestsTotal: number;
  rejectedTotal: number;
  /**
   * Requests the API server's priority and fairness dispatched and rejected for the flow schema
   * `global-default`. Here that is the app's traffic: the functions' and the bridge's users match no
   * other schema (the kubelets are system-nodes, the control plane's components and the admin have
   * schemas of their own), so this is as close to "the app's requests" as the API server says.
   */
  appDispatchedTotal: number;
  appRejectedTotal: number;
  inflightReadOnly: number;
  inflightMutating: number;
}

export interface Disturbance {
  from: number;
  to: number;
  what: string;
}

export interface DayHistory {
  nodeClaims: readonly Version<NodeClaim>[];
  nodes: readonly Version<Node>[];
  pods: readonly Version<DayPod>[];
  armRequests: readonly ArmRequest[];
  vmFailures: readonly VmFailure[];
  /** Every budget list a NodePool had, from when it was written (only the scenario writes NodePools). */
  poolBudgets: readonly { at: number; pool: string; budgets: Budget[] }[];
  /** When a NodePool or AKSNodeClass spec changed (a command computed before then is not the same one). */
  poolChanges: readonly { at: number; pool: string }[];
  pools: readonly PoolSettings[];
  pdbs: readonly PdbRule[];
  /** Every status version of the day's PDBs, in the order seen (evidence beside a breach). */
  pdbStatuses: readonly PdbStatusVersion[];
  /** Each Deployment's replicas, from when they were written. */
  replicas: readonly { at: number; set: string; replicas: number }[];
  /** Sets whose pods carry karpenter.sh/do-not-disrupt. */
  doNotDisruptSets: readonly string[];
  /** The `app` label of the DaemonSet's pods (bound by the DaemonSet controller, not the scheduler). */
  daemonSet: string;
  /** Times the cluster could not act (API server down, function host dead), with their end. */
  disturbances: readonly Disturbance[];
  /** Nodes whose kubelet the weather stopped, and when: Kubernetes notices only when they go NotReady. */
  brokenNodes: readonly { node: string; at: number }[];
  apiServer: readonly ApiServerSample[];
  /** 429s the weather's throttle faults answered (the rest came from Compute's buckets). */
  injectedThrottles: number;
  /** The cluster and the cloud as listed once the day settled, and after everything was deleted. */
  end?: EndState;
  teardown?: { vms: number; nodes: number; nodeClaims: number };
}

export interface EndState {
  at: number;
  vms: readonly { name: string; provisioningState: string }[];
  nodeClaims: readonly NodeClaim[];
  nodes: readonly Node[];
  /** When each NodeClaim was first seen. */
  firstSeen: Readonly<Record<string, number>>;
}

export interface InvariantResult {
  name: string;
  holds: boolean;
  /** The figure that shows it, e.g. "at most 2 of 2 Drifted". */
  detail: string;
  /** The first few violations, each saying when and what. */
  violations: string[];
}

export const MAX_VIOLATIONS_SHOWN = 5;

export function result(name: string, violations: readonly string[], detail: string): InvariantResult {
  return {
    name,
    holds: violations.length === 0,
    detail,
    violations: violations.slice(0, MAX_VIOLATIONS_SHOWN),
  };
}

export const poolOf = (claim: NodeClaim): string => claim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '';

/** Seconds since `origin`, for messages. */
export const secondsAfter = (at: number, origin: number): string => `${((at - origin) / 1000).toFixed(1)} s`;

/** Everything in the order it was seen; ties keep their kind's order. */
export function merged<A, B>(
  a: readonly Version<A>[],
  b: readonly Version<B>[],
): ({ claim: Version<A> } | { node: Version<B> })[] {
  const out: ({ claim: Version<A> } | { node: Version<B> })[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const left = a[i];
    const right = b[j];
    if (left !== undefined && (right === undefined || left.at <= right.at)) {
      out.push({ claim: left });
      i++;
    } else if (right !== undefined) {
      out.push({ node: right });
      j++;
    }
  }
  return out;
}

export function firstOrigin(history: DayHistory): number {
  return Math.min(
    history.nodeClaims[0]?.at ?? Infinity,
    history.pods[0]?.at ?? Infinity,
    history.armRequests[0]?.at ?? Infinity,
  );
}

/** How long, of `from`..`to`, the cluster could not act (an outage, a dead host): what a bound grows by. */
export function disturbedDuring(history: Pick<DayHistory, 'disturbances'>, from: number, to: number): number {
  return history.disturbances.reduce(
    (sum, d) => sum + Math.max(0, Math.min(to, d.to) - Math.max(from, d.from)),
    0,
  );
}
