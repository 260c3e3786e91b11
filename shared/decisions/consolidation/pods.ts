// The pod facts consolidation decides from, as plain data (kube/pods.ts toConsolidationPod converts API
// pods). Which pods must move when a node goes, which pods forbid moving them, and when a pod's
// karpenter.sh/do-not-disrupt annotation still protects its node: upstream Karpenter's rules.
import { WellKnown } from '../../models/karpenter.js';
import type { SchedulingPodSpec } from '../scheduling/types.js';
import { parseGoDuration } from '../go-values.js';
import { MIRROR_POD_ANNOTATION, podDrainAction, type DrainPod } from '../drain.js';

export interface ConsolidationPod extends DrainPod {
  uid: string;
  labels: Readonly<Record<string, string>>;
  /** spec.nodeName; undefined while the pod is pending. */
  nodeName?: string;
  /** status.nominatedNodeName: the scheduler reserved room on that node for this pending pod. */
  nominatedNodeName?: string;
  /** status.startTime, from which a do-not-disrupt duration counts. */
  startTime?: string;
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

/**
 * What a pod's karpenter.sh/do-not-disrupt says now, as upstream's IsDoNotDisruptActive reads it: "true"
 * protects for good; a Go duration (time.ParseDuration, positive) protects until that long after the
 * pod's status.startTime, and for as long as the pod has not started (upstream fails safe); any other
 * value protects nothing and is reported as invalid. A terminal or terminating pod protects nothing.
 */
export type DoNotDisrupt =
  | { kind: 'none' }
  | { kind: 'always' }
  | { kind: 'until'; value: string; until?: Date }
  | { kind: 'elapsed'; value: string; since: Date }
  | { kind: 'invalid'; value: string; message: string };

export function doNotDisruptOf(pod: ConsolidationPod, now: Date): DoNotDisrupt {
  if (isTerminal(pod) || isTerminating(pod)) return { kind: 'none' };
  const value = pod.annotations[WellKnown.doNotDisruptAnnotation];
  if (value === undefined) return { kind: 'none' };
  if (value === 'true') return { kind: 'always' };
  const parsed = parseGoDuration(value);
  if ('error' in parsed) {
    return {
      kind: 'invalid',
      value,
      message: `failed to parse ${JSON.stringify(value)} as a duration: ${parsed.error}`,
    };
  }
  if (parsed.ns <= 0n) {
    return { kind: 'invalid', value, message: `duration ${JSON.stringify(value)} must be positive` };
  }
  const started = Date.parse(pod.startTime ?? '');
  if (!Number.isFinite(started)) return { kind: 'until', value };
  const until = started + Number(parsed.ns) / 1e6;
  return now.getTime() < until
    ? { kind: 'until', value, until: new Date(until) }
    : { kind: 'elapsed', value, since: new Date(until) };
}

export function isDoNotDisruptActive(pod: ConsolidationPod, now: Date): boolean {
  const state = doNotDisruptOf(pod, now);
  return state.kind === 'always' || state.kind === 'until';
}

/** Why the pod's karpenter.sh/do-not-disrupt protects its node now, or undefined. */
export function doNotDisruptBlock(pod: ConsolidationPod, now: Date): string | undefined {
  const state = doNotDisruptOf(pod, now);
  if (state.kind !== 'always' && state.kind !== 'until') return undefined;
  const what = `pod ${pod.namespace}/${pod.name} has "${WellKnown.doNotDisruptAnnotation}" annotation`;
  return state.kind === 'always' ? what : `${what} (${state.value})`;
}
