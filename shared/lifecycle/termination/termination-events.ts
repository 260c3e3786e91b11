// A drain is where a user asks "why is my node still here" and "what happened to my pod": upstream's
// termination controller answers on the objects they look at (the Pod, the Node, the NodeClaim), with its
// reasons and messages (pkg/controllers/node/termination/terminator/events/events.go and the NodeClaim
// lifecycle's grace-period event). A drain pass runs every few seconds, so repeats are dropped as
// upstream's recorder drops them: the same reason for the same object within its dedupe window (2 minutes
// by default), keyed on the reason and the object, not the message.
import type { EventReason } from '../../decisions/event-reasons.js';
import { nodeTarget, type EventTarget } from '../../kube/events.js';
import type { NodeClaim } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { createEventDedupe } from '../../kube/event-dedupe.js';
import { nodeClaimTarget } from '../nodeclaims/nodeclaim-writes.js';

export const TerminationEventReasons = {
  evicted: 'Evicted',
  disrupted: 'Disrupted',
  failedDraining: 'FailedDraining',
  gracePeriodExpiring: 'TerminationGracePeriodExpiring',
} as const satisfies Record<string, EventReason>;

/** Upstream's recorder default. */
const DEDUPE_MS = 2 * 60_000;
const dedupe = createEventDedupe();
const firstInWindow = dedupe.firstInWindow;

/** Forgets what was sent (tests that count events start from a clean slate). */
export function resetTerminationEventDedupe(): void {
  dedupe.reset();
}

export interface EventPod {
  namespace: string;
  name: string;
  uid?: string;
  /** spec.terminationGracePeriodSeconds (Kubernetes defaults it to 30). */
  terminationGracePeriodSeconds?: number;
}

function podTarget(pod: EventPod): EventTarget {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    namespace: pod.namespace,
    name: pod.name,
    ...(pod.uid ? { uid: pod.uid } : {}),
  };
}

/**
 * Why a pod was evicted, as upstream says it: the NodeClaim's DisruptionReason when it is being disrupted
 * (Drifted, Empty, Underutilized, …), otherwise "Forceful Termination" (it was deleted outright).
 */
export function evictionReasonOf(nodeClaim: NodeClaim): string {
  const condition = nodeClaim.status?.conditions?.find((c) => c.type === 'DisruptionReason');
  return condition?.status === 'True' && condition.reason ? condition.reason : 'Forceful Termination';
}

/** Normal `Evicted` on the pod the Eviction API accepted. */
export async function publishPodEvicted(
  deps: Pick<LifecycleDependencies, 'events' | 'now'>,
  pod: EventPod,
  reason: string,
): Promise<void> {
  const key = `${TerminationEventReasons.evicted}|${pod.namespace}/${pod.name}`;
  if (!firstInWindow(key, deps.now().getTime(), DEDUPE_MS)) return;
  await deps.events.normal(podTarget(pod), TerminationEventReasons.evicted, `Evicted pod: ${reason}`);
}

/** Normal `Disrupted` on a pod deleted because the NodeClaim's terminationGracePeriod ran out. */
export async function publishPodDisrupted(
  deps: Pick<LifecycleDependencies, 'events' | 'now'>,
  pod: EventPod,
  terminationTime: Date,
  grantedSeconds: number,
): Promise<void> {
  const key = `${TerminationEventReasons.disrupted}|${pod.namespace}/${pod.name}`;
  if (!firstInWindow(key, deps.now().getTime(), DEDUPE_MS)) return;
  const own = pod.terminationGracePeriodSeconds ?? 30;
  await deps.events.normal(
    podTarget(pod),
    TerminationEventReasons.disrupted,
    `Deleting the pod to accommodate the terminationTime ${goTimeString(terminationTime)} of the node. The pod was granted ${grantedSeconds} seconds of grace-period of its ${own} terminationGracePeriodSeconds. This bypasses the PDB of the pod and the do-not-disrupt annotation.`,
  );
}

/**
 * Warning `FailedDraining` on a Node whose pods are not all gone after a pass: a PodDisruptionBudget
 * refused an eviction, or pods are still waiting to be evicted (upstream's two messages).
 */
export async function publishNodeFailedToDrain(
  deps: Pick<LifecycleDependencies, 'events' | 'now'>,
  node: Node,
  detail: { waiting: number; blockedByPdb: number },
): Promise<void> {
  const key = `${TerminationEventReasons.failedDraining}|${node.metadata.name}`;
  if (!firstInWindow(key, deps.now().getTime(), DEDUPE_MS)) return;
  const why =
    detail.blockedByPdb > 0
      ? 'evicting pod violates a PDB'
      : `${detail.waiting} pods are waiting to be evicted`;
  await deps.events.warning(
    nodeTarget(node),
    TerminationEventReasons.failedDraining,
    `Failed to drain node, ${why}`,
  );
}

/**
 * Warning `TerminationGracePeriodExpiring` while a NodeClaim with a terminationGracePeriod drains: on its
 * Node every pass (deduped), on the NodeClaim once for its termination time (upstream publishes it there
 * when it annotates the NodeClaim with that time).
 */
export async function publishGracePeriodExpiring(
  deps: Pick<LifecycleDependencies, 'events' | 'now'>,
  nodeClaim: NodeClaim,
  nodes: readonly Node[],
  terminationTime: Date,
): Promise<void> {
  const now = deps.now().getTime();
  const message = `All pods will be deleted by ${rfc3339Seconds(terminationTime)}`;
  const reason = TerminationEventReasons.gracePeriodExpiring;
  const claimKey = `${reason}|NodeClaim|${nodeClaim.metadata.uid ?? nodeClaim.metadata.name}|${terminationTime.getTime()}`;
  if (firstInWindow(claimKey, now, Number.POSITIVE_INFINITY))
    await deps.events.warning(nodeClaimTarget(nodeClaim), reason, message);
  for (const node of nodes) {
    if (firstInWindow(`${reason}|Node|${node.metadata.name}`, now, DEDUPE_MS))
      await deps.events.warning(nodeTarget(node), reason, message);
  }
}

/** Go's time.Time String() for a UTC time, as upstream's %v prints it: `2026-01-01 02:00:00 +0000 UTC`. */
function goTimeString(time: Date): string {
  const [date, clock] = time.toISOString().slice(0, -1).split('T') as [string, string];
  const trimmed = clock.replace(/\.?0+$/, '');
  return `${date} ${trimmed} +0000 UTC`;
}

/** Go's time.RFC3339 for a UTC time: no fractional seconds. */
function rfc3339Seconds(time: Date): string {
  return time.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
