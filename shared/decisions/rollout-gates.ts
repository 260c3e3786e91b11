// The health gates a rollout passes between waves, as a function of plain data. They judge the nodes this
// rollout replaced (the pool's up-to-date NodeClaims created since the gates' start) against the old
// ones, and each failure names its gate, the node or pod, and the figures, which the NodePool's
// annotation, condition and Warning event then carry:
//   ReplacementFailed: a drifted node's replacement failed since the gates' start (the executor's backoff
//     annotations), or an up-to-date NodeClaim is not Initialized within its limit of its creation;
//   PodNotReady: a pod bound to an up-to-date node is not Ready within its limit of being scheduled;
//   NodeUnhealthy: an up-to-date node that was Ready (its NodeClaim Initialized) is not Ready now, or
//     matches a node repair policy's condition, without waiting out the policy's toleration (a spot
//     eviction notice says nothing about the change, so preemption's policy is left out);
//   PodRestarts: a pod on an up-to-date node restarted at least its limit, and pods on up-to-date nodes
//     restart more on average than pods on the old ones (a crash loop the change brought, not the app's).
import { ConditionTypes, type NodeClaim } from '../models/karpenter.js';
import type { Node } from '../models/kube.js';
import { isConditionTrue } from './conditions.js';
import { replacementBackoffOf } from './disruption-state.js';
import { conditionMatches, type RepairPolicy } from './node-repair/policies.js';

export const RolloutGates = {
  replacementFailed: 'ReplacementFailed',
  podNotReady: 'PodNotReady',
  nodeUnhealthy: 'NodeUnhealthy',
  podRestarts: 'PodRestarts',
} as const;
export type RolloutGateName = (typeof RolloutGates)[keyof typeof RolloutGates];

export interface RolloutGateFailure {
  gate: RolloutGateName;
  /** The NodeClaim, Node or pod (namespace/name) the failure is about. */
  subject: string;
  message: string;
}

/** What the gates read of a pod. */
export interface RolloutPod {
  namespace: string;
  name: string;
  nodeName: string;
  phase?: string;
  terminating: boolean;
  /** When PodScheduled became True. */
  scheduledAt?: string;
  ready: boolean;
  /** When the Ready condition last changed. */
  readyChangedAt?: string;
  /** Restarts of the pod's containers, summed. */
  restarts: number;
}

export interface RolloutGateLimits {
  initializedWithinSeconds: number;
  podReadyWithinSeconds: number;
  maxPodRestarts: number;
  /** REPLACEMENT_BACKOFF_MINUTES in ms: how a failure's time is read back from its backoff. */
  replacementBackoffBaseMs: number;
  repairPolicies: readonly RepairPolicy[];
}

export interface RolloutGateInput {
  /** The pool's NodeClaims. */
  nodeClaims: readonly NodeClaim[];
  nodesFor(nodeClaim: NodeClaim): readonly Node[];
  /** Pods by Node name: every up-to-date node's, and the old nodes' when oldPodsNeeded said so. */
  podsOn(nodeName: string): readonly RolloutPod[];
  gatesFrom: Date;
  now: Date;
  limits: RolloutGateLimits;
}

const drifted = (c: NodeClaim): boolean => isConditionTrue(c.status?.conditions, ConditionTypes.drifted);
const initialized = (c: NodeClaim): boolean =>
  isConditionTrue(c.status?.conditions, ConditionTypes.initialized);
const createdAt = (c: NodeClaim): number => Date.parse(c.metadata.creationTimestamp ?? '');
const seconds = (ms: number): number => Math.round(ms / 1000);

/** The nodes this rollout replaced: up to date (not drifted), not deleting, created since `gatesFrom`. */
export function replacedNodeClaims(nodeClaims: readonly NodeClaim[], gatesFrom: Date): NodeClaim[] {
  return nodeClaims.filter(
    (c) => !drifted(c) && !c.metadata.deletionTimestamp && createdAt(c) >= gatesFrom.getTime(),
  );
}

/** The old nodes: drifted and not deleting. */
export function oldNodeClaims(nodeClaims: readonly NodeClaim[]): NodeClaim[] {
  return nodeClaims.filter((c) => drifted(c) && !c.metadata.deletionTimestamp);
}

/** Pods that run or should: not finished, not being deleted. */
const active = (pod: RolloutPod): boolean =>
  !pod.terminating && pod.phase !== 'Succeeded' && pod.phase !== 'Failed';

/** Whether the restart gate needs the old nodes' pods (read only then: it is one list per old node). */
export function oldPodsNeeded(replacedPods: readonly RolloutPod[], maxPodRestarts: number): boolean {
  return replacedPods.some((p) => active(p) && p.restarts >= maxPodRestarts);
}

function replacementFailures(input: RolloutGateInput): RolloutGateFailure[] {
  const { nodeClaims, gatesFrom, now, limits } = input;
  const failures: RolloutGateFailure[] = [];
  for (const nodeClaim of nodeClaims.filter(drifted)) {
    const backoff = replacementBackoffOf(nodeClaim);
    const until = Date.parse(backoff.backoffUntil ?? '');
    if (backoff.attempts === 0 || !Number.isFinite(until)) continue;
    // failedAttemptAnnotations holds the node for base × 2^(attempts−1), at most 8× the base.
    const failedAt = until - limits.replacementBackoffBaseMs * Math.min(8, 2 ** (backoff.attempts - 1));
    if (failedAt < gatesFrom.getTime()) continue;
    failures.push({
      gate: RolloutGates.replacementFailed,
      subject: nodeClaim.metadata.name,
      message: `the replacement of NodeClaim ${nodeClaim.metadata.name} failed at ${new Date(failedAt).toISOString()} (attempt ${backoff.attempts})`,
    });
  }
  for (const nodeClaim of replacedNodeClaims(nodeClaims, gatesFrom)) {
    if (initialized(nodeClaim)) continue;
    const age = now.getTime() - createdAt(nodeClaim);
    if (age < limits.initializedWithinSeconds * 1000) continue;
    failures.push({
      gate: RolloutGates.replacementFailed,
      subject: nodeClaim.metadata.name,
      message: `NodeClaim ${nodeClaim.metadata.name} is not Initialized ${seconds(age)} s after its creation (limit ${limits.initializedWithinSeconds} s)`,
    });
  }
  return failures;
}

function nodeFailures(input: RolloutGateInput, replaced: readonly NodeClaim[]): RolloutGateFailure[] {
  const failures: RolloutGateFailure[] = [];
  const policies = input.limits.repairPolicies.filter((p) => p.action !== 'preempted');
  for (const nodeClaim of replaced.filter(initialized)) {
    for (const node of input.nodesFor(nodeClaim)) {
      if (node.metadata.deletionTimestamp) continue;
      const conditions = node.status?.conditions ?? [];
      const ready = conditions.find((c) => c.type === 'Ready');
      const subject = node.metadata.name;
      if (ready?.status !== 'True') {
        failures.push({
          gate: RolloutGates.nodeUnhealthy,
          subject,
          message: `Node ${subject} was Ready and is now Ready=${ready?.status ?? 'Unknown'}${ready?.reason ? ` (${ready.reason})` : ''}`,
        });
        continue;
      }
      const matched = policies.find((p) =>
        conditionMatches(
          p,
          conditions.find((c) => c.type === p.conditionType),
        ),
      );
      if (matched) {
        const condition = conditions.find((c) => c.type === matched.conditionType);
        failures.push({
          gate: RolloutGates.nodeUnhealthy,
          subject,
          message: `Node ${subject} has ${matched.conditionType}=${matched.conditionStatus}${condition?.reason ? ` (${condition.reason})` : ''}, a node repair policy's condition`,
        });
      }
    }
  }
  return failures;
}

function podsOfNodeClaims(input: RolloutGateInput, nodeClaims: readonly NodeClaim[]): RolloutPod[] {
  return nodeClaims.flatMap((c) => input.nodesFor(c).flatMap((n) => input.podsOn(n.metadata.name)));
}

function podReadinessFailures(input: RolloutGateInput, pods: readonly RolloutPod[]): RolloutGateFailure[] {
  const limitMs = input.limits.podReadyWithinSeconds * 1000;
  const now = input.now.getTime();
  const failures: RolloutGateFailure[] = [];
  for (const pod of pods.filter(active)) {
    if (pod.ready) continue;
    const scheduled = Date.parse(pod.scheduledAt ?? '');
    if (!Number.isFinite(scheduled) || now - scheduled < limitMs) continue;
    // A pod that was Ready and just stopped being so gets the same time to come back.
    const changed = Date.parse(pod.readyChangedAt ?? '');
    if (Number.isFinite(changed) && now - changed < limitMs) continue;
    const subject = `${pod.namespace}/${pod.name}`;
    failures.push({
      gate: RolloutGates.podNotReady,
      subject,
      message: `pod ${subject} on Node ${pod.nodeName} is not Ready ${seconds(now - scheduled)} s after it was scheduled (limit ${input.limits.podReadyWithinSeconds} s)`,
    });
  }
  return failures;
}

const meanRestarts = (pods: readonly RolloutPod[]): number =>
  pods.length === 0 ? 0 : pods.reduce((sum, p) => sum + p.restarts, 0) / pods.length;

function restartFailures(
  input: RolloutGateInput,
  replacedPods: readonly RolloutPod[],
  oldPods: readonly RolloutPod[],
): RolloutGateFailure[] {
  const current = replacedPods.filter(active);
  const worst = current.reduce<RolloutPod | undefined>(
    (best, pod) => (!best || pod.restarts > best.restarts ? pod : best),
    undefined,
  );
  if (!worst || worst.restarts < input.limits.maxPodRestarts) return [];
  const newMean = meanRestarts(current);
  const oldMean = meanRestarts(oldPods.filter(active));
  if (newMean <= oldMean) return [];
  const subject = `${worst.namespace}/${worst.name}`;
  return [
    {
      gate: RolloutGates.podRestarts,
      subject,
      message: `pod ${subject} on Node ${worst.nodeName} restarted ${worst.restarts} times (limit ${input.limits.maxPodRestarts}); pods restart ${newMean.toFixed(2)} times on average on up-to-date nodes, ${oldMean.toFixed(2)} on old nodes`,
    },
  ];
}

/** Every gate that fails now; empty when the rollout may go on. */
export function failedRolloutGates(input: RolloutGateInput): RolloutGateFailure[] {
  const replaced = replacedNodeClaims(input.nodeClaims, input.gatesFrom);
  const onReplaced = podsOfNodeClaims(input, replaced.filter(initialized));
  return [
    ...replacementFailures(input),
    ...podReadinessFailures(input, onReplaced),
    ...nodeFailures(input, replaced),
    ...restartFailures(input, onReplaced, podsOfNodeClaims(input, oldNodeClaims(input.nodeClaims))),
  ];
}
