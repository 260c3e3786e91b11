// Which pods a drain must move off a node, and how. Mirrors upstream Karpenter's termination: DaemonSet
// pods and static (mirror) pods stay (they would come straight back, or cannot be evicted), finished pods
// and pods tolerating karpenter.sh/disrupted stay, a pod karpenter.sh/do-not-disrupt still protects is
// waited for, and everything else is evicted through the Eviction API until terminationGracePeriod runs
// out, after which what is left is deleted.
import { WellKnown } from '../models/karpenter.js';
import { isDoNotDisruptActive } from './do-not-disrupt.js';

export interface DrainPod {
  namespace: string;
  name: string;
  phase?: string;
  ownerKinds: readonly string[];
  annotations: Readonly<Record<string, string>>;
  tolerations: readonly { key?: string; operator?: string; effect?: string }[];
  /** Set once the pod is being deleted: when its grace period ends. */
  deletionTimestamp?: string;
  /** status.startTime, from which a karpenter.sh/do-not-disrupt duration counts. */
  startTime?: string;
}

export type PodDrainAction = 'leave' | 'wait' | 'evict' | 'delete';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

function toleratesDisrupted(pod: DrainPod): boolean {
  return pod.tolerations.some(
    (t) =>
      (t.operator === 'Exists' && (t.key === undefined || t.key === '')) ||
      (t.key === WellKnown.disruptedTaintKey &&
        (t.effect === undefined || t.effect === '' || t.effect === 'NoSchedule')),
  );
}

/**
 * `graceDeadline` is when terminationGracePeriod ends (undefined: never). A pod already being deleted is
 * waited for until its own deletion deadline; past it the pod is stuck (its kubelet is gone or wedged)
 * and no longer holds the node, as upstream treats stuck-terminating pods.
 */
export function podDrainAction(pod: DrainPod, now: Date, graceDeadline: Date | undefined): PodDrainAction {
  if (pod.ownerKinds.includes('DaemonSet')) return 'leave';
  if (pod.annotations[MIRROR_POD_ANNOTATION] !== undefined) return 'leave';
  if (pod.phase === 'Succeeded' || pod.phase === 'Failed') return 'leave';
  if (toleratesDisrupted(pod)) return 'leave';
  if (pod.deletionTimestamp) {
    return Date.parse(pod.deletionTimestamp) <= now.getTime() ? 'leave' : 'wait';
  }
  if (graceDeadline && now.getTime() >= graceDeadline.getTime()) return 'delete';
  // Upstream evicts no pod whose do-not-disrupt still protects it; the drain waits for it.
  if (isDoNotDisruptActive(pod, now)) return 'wait';
  return 'evict';
}
