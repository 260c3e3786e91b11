// The pod facts consolidation decides from, as plain data (kube/pods.ts toConsolidationPod converts API
// pods). Which pods must move when a node goes, which pods forbid moving them, and when a pod's
// karpenter.sh/do-not-disrupt annotation still protects its node: upstream Karpenter's rules.
import { WellKnown } from '../../models/karpenter.js';
import type { BoundPod, SchedulingPodSpec } from '../scheduling/types.js';
import { doNotDisruptOf } from '../do-not-disrupt.js';
import { MIRROR_POD_ANNOTATION, podDrainAction, type DrainPod } from '../drain.js';

export interface ConsolidationPod extends DrainPod {
  uid: string;
  labels: Readonly<Record<string, string>>;
  /** spec.nodeName; undefined while the pod is pending. */
  nodeName?: string;
  /** status.nominatedNodeName: the scheduler reserved room on that node for this pending pod. */
  nominatedNodeName?: string;
  /** spec.priority (set from the PriorityClass at admission): part of the pod's eviction cost. */
  priority?: number;
  /** The Ready condition is True. */
  ready: boolean;
  /** When the PodScheduled condition became True: the pod's bind time. */
  scheduledAt?: string;
  /**
   * Effective requests as kube-scheduler charges the pod, in the scheduling simulation's units (cpu in
   * millicores, the rest in whole base units: scheduling/resources.ts).
   */
  requests?: Readonly<Record<string, number>>;
  /** What the scheduling simulation reads of the pod's spec (Underutilized consolidation moves it). */
  spec?: SchedulingPodSpec;
  creationTimestamp?: string;
  /** The owner reference that says `controller: true` (a provisioning window reads its kind and name). */
  controller?: { apiVersion: string; kind: string; name: string; uid: string };
  /** The PodScheduled condition as it stands: a pending pod is provisionable when it says False/Unschedulable. */
  scheduling?: { status: string; reason?: string };
  /** A CapacityBuffer's virtual pod, in consolidation's view only: no pod of the API. */
  virtual?: true;
}

export const isOwnedByDaemonSet = (pod: DrainPod): boolean => pod.ownerKinds.includes('DaemonSet');
export const isMirrorPod = (pod: DrainPod): boolean => pod.annotations[MIRROR_POD_ANNOTATION] !== undefined;
export const isTerminal = (pod: DrainPod): boolean => pod.phase === 'Succeeded' || pod.phase === 'Failed';
export const isTerminating = (pod: DrainPod): boolean => pod.deletionTimestamp !== undefined;

/**
 * Pods that need a new home when their node goes: active (or a terminating StatefulSet pod, whose
 * successor keeps its identity and must find room), not DaemonSet pods (they come with every node) and
 * not mirror pods (they belong to the node itself). A node without any is empty.
 */
export function isReschedulable(pod: DrainPod): boolean {
  if (isTerminal(pod) || isOwnedByDaemonSet(pod) || isMirrorPod(pod)) return false;
  return !isTerminating(pod) || pod.ownerKinds.includes('StatefulSet');
}

/** Pods whose eviction a drain asks for: the ones a PodDisruptionBudget can refuse. */
export function isEvictable(pod: DrainPod, now: Date): boolean {
  return podDrainAction(pod, now, undefined) === 'evict';
}

/** Why the pod's karpenter.sh/do-not-disrupt protects its node now, or undefined. */
export function doNotDisruptBlock(pod: ConsolidationPod, now: Date): string | undefined {
  const state = doNotDisruptOf(pod, now);
  if (state.kind !== 'always' && state.kind !== 'until') return undefined;
  const what = `pod ${pod.namespace}/${pod.name} has "${WellKnown.doNotDisruptAnnotation}" annotation`;
  return state.kind === 'always' ? what : `${what} (${state.value})`;
}

/** What the scheduling simulation charges a node for: its pods that have not finished, as bound pods. */
export function boundPodsOf(pods: readonly ConsolidationPod[]): BoundPod[] {
  return pods
    .filter((p) => p.phase !== 'Succeeded' && p.phase !== 'Failed')
    .map((p) => ({
      namespace: p.namespace,
      name: p.name,
      labels: { ...p.labels },
      ...(p.spec ? { spec: p.spec } : {}),
    }));
}
