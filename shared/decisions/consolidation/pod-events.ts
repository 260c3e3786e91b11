// How the last pod event on a node is known. Upstream Karpenter watches pods and stamps
// status.lastPodEventTime when a pod binds, goes terminal or starts terminating. Here two sources feed it:
// - the sweep's pod cache is watch-fed, and every change it applies is judged by podEventNode: a pod
//   event is stamped at the time the watch delivered it, as upstream. That memory lives in the process
//   (a restart starts it empty), so
// - the sweep also compares each node's set of pods with the digest it recorded on the NodeClaim last
//   time: when the set changed, a pod arrived, left, finished or started terminating since then, and the
//   event time is the sweep's own time (at most one sweep period after the real one). A node seen for the
//   first time gets its digest recorded and its newest bind time (exact for arrivals; departures before
//   the first look are not guessed; a pod without a bind time counts as arriving at the sweep's time).
// The newest of the two wins. Only the digest alone would miss pods that came and went between two
// sweeps (the set looks unchanged), and the node could then be consolidated earlier than upstream would.
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

/**
 * The Node a change of one pod is a pod event on, or undefined when it is none: the pod was bound, went
 * terminal, started terminating, or was removed while bound and still active (a forced deletion skips
 * terminating). DaemonSet pods make no pod events, as upstream. `previous` is undefined for a new pod,
 * `next` for a removed one.
 */
export function podEventNode(
  previous: ConsolidationPod | undefined,
  next: ConsolidationPod | undefined,
): string | undefined {
  const pod = next ?? previous;
  if (!pod || isOwnedByDaemonSet(pod)) return undefined;
  if (!next) {
    return previous?.nodeName && !isTerminal(previous) && !isTerminating(previous)
      ? previous.nodeName
      : undefined;
  }
  if (!next.nodeName) return undefined;
  const bound = !previous?.nodeName;
  const wentTerminal = isTerminal(next) && !(previous && isTerminal(previous));
  const startedTerminating = isTerminating(next) && !(previous && isTerminating(previous));
  return bound || wentTerminal || startedTerminating ? next.nodeName : undefined;
}

/**
 * The pods that can still come to or leave a node (not DaemonSet pods, not finished, not a buffer's
 * virtual pods), as a digest of their UIDs: two reads with the same digest saw no pod arrive or go in
 * between. A finished pod's garbage collection changes nothing, as it makes no pod event upstream.
 */
export function activePodsDigest(pods: readonly ConsolidationPod[]): string {
  const uids = pods
    .filter((pod) => !isOwnedByDaemonSet(pod) && !isTerminal(pod) && !pod.virtual)
    .map((pod) => pod.uid)
    .sort();
  return createHash('sha256').update(uids.join(',')).digest('hex').slice(0, 16);
}

export interface PodEventInput {
  /** The digest recorded on the NodeClaim; undefined when none was recorded yet. */
  recordedDigest: string | undefined;
  lastPodEventTime: string | undefined;
  pods: readonly ConsolidationPod[];
  /** When the pod watch last saw a pod event on the node (ms since the epoch), if it saw one. */
  observedEventAt?: number | undefined;
  now: Date;
}

export interface PodEventUpdate {
  digest: string;
  /** The new status.lastPodEventTime, or the current one when nothing happened. */
  lastPodEventTime: string | undefined;
  changed: boolean;
}

export function nextPodEvent(input: PodEventInput): PodEventUpdate {
  const fromDigest = digestPodEvent(input);
  const observed = input.observedEventAt;
  if (observed === undefined || !Number.isFinite(observed)) return fromDigest;
  const fromDigestAt = Date.parse(fromDigest.lastPodEventTime ?? '');
  if (Number.isFinite(fromDigestAt) && observed <= fromDigestAt) return fromDigest;
  return { ...fromDigest, lastPodEventTime: new Date(observed).toISOString(), changed: true };
}

function digestPodEvent(input: PodEventInput): PodEventUpdate {
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
