// How the last pod event on a node is known without a pod watch. Upstream Karpenter watches pods and
// stamps status.lastPodEventTime when a pod binds, goes terminal or starts terminating. Here the sweep
// (which lists pods anyway for consolidation) compares each node's set of pods with the digest it
// recorded on the NodeClaim last time: when the set changed, a pod arrived, left, finished or started
// terminating since then, and the event time is the sweep's own time: a departure leaves no timestamp
// behind, so the time is at most one sweep period later than the event, and consolidation can only start
// later than upstream, never earlier. A node seen for the first time gets its digest recorded and its
// newest bind time (exact for arrivals; departures before the first look are not guessed; a pod without
// a bind time counts as arriving at the sweep's time).
import { createHash } from 'node:crypto';
import { isOwnedByDaemonSet, isTerminal, isTerminating, type ConsolidationPod } from './pods.js';

export const POD_SET_DIGEST_ANNOTATION = 'karpenter.azure.com/pod-set-digest';

/** Every pod that can make a pod event (DaemonSet pods cannot, as upstream), with its state. */
export function podSetDigest(pods: readonly ConsolidationPod[]): string {
  const entries = pods
    .filter((pod) => !isOwnedByDaemonSet(pod))
    .map((pod) => `${pod.uid}:${isTerminal(pod) ? 'T' : isTerminating(pod) ? 'D' : 'A'}`)
    .sort();
  return createHash('sha256').update(entries.join(',')).digest('hex').slice(0, 16);
}

export interface PodEventInput {
  /** The digest recorded on the NodeClaim; undefined when none was recorded yet. */
  recordedDigest: string | undefined;
  lastPodEventTime: string | undefined;
  pods: readonly ConsolidationPod[];
  now: Date;
}

export interface PodEventUpdate {
  digest: string;
  /** The new status.lastPodEventTime, or the current one when nothing happened. */
  lastPodEventTime: string | undefined;
  changed: boolean;
}

export function nextPodEvent(input: PodEventInput): PodEventUpdate {
  const digest = podSetDigest(input.pods);
  if (input.recordedDigest === digest) {
    return { digest, lastPodEventTime: input.lastPodEventTime, changed: false };
  }
  const eventful = input.pods.filter((pod) => !isOwnedByDaemonSet(pod));
  const newestBind = eventful
    .map((pod) => Date.parse(pod.scheduledAt ?? ''))
    .filter(Number.isFinite)
    .reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY);
  const previous = Date.parse(input.lastPodEventTime ?? '');
  let at = input.now.getTime();
  if (input.recordedDigest === undefined) {
    // First look: pods without a known bind time may have arrived just now.
    const arrivals =
      eventful.length === 0 ? Number.NEGATIVE_INFINITY : Number.isFinite(newestBind) ? newestBind : at;
    at = Math.max(arrivals, Number.isFinite(previous) ? previous : Number.NEGATIVE_INFINITY);
  }
  const lastPodEventTime = Number.isFinite(at) ? new Date(at).toISOString() : input.lastPodEventTime;
  return { digest, lastPodEventTime, changed: true };
}
