// What node repair says, where a user looks (`kubectl describe` of the Node and of the NodeClaim): each
// step of a repair naming the policy that matched, and upstream's NodeRepairBlocked when the 20% breaker
// holds repair back (on the Node and the NodeClaim, once per 15 minutes per node, upstream's dedupe).
import type { EventTarget } from '../../../kube/events.js';
import type { NodeClaim } from '../../../models/karpenter.js';
import type { Node } from '../../../models/kube.js';
import type { LifecycleDependencies } from '../../dependencies.js';
import { nodeClaimTarget } from '../../nodeclaims/nodeclaim-writes.js';
import { nodeTarget } from '../../../kube/events.js';

export const RepairEventReasons = {
  /** Upstream's reason for a repair the breaker holds. */
  blocked: 'NodeRepairBlocked',
  started: 'NodeRepairStarted',
  rebooted: 'NodeRepairRebooted',
  recovered: 'NodeRepaired',
  replacing: 'NodeRepairReplacing',
} as const;

type RepairEventReason = (typeof RepairEventReasons)[keyof typeof RepairEventReasons];

const BLOCKED_DEDUPE_MS = 15 * 60_000;
const lastBlocked = new Map<string, number>();

/** A step of a repair, on the Node(s) and the NodeClaim; a Warning, as upstream's repair events are. */
export async function publishRepairEvent(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  nodes: readonly Node[],
  reason: RepairEventReason,
  message: string,
): Promise<void> {
  const publish = (target: EventTarget) =>
    reason === RepairEventReasons.recovered
      ? deps.events.normal(target, reason, message)
      : deps.events.warning(target, reason, message);
  for (const node of nodes) await publish(nodeTarget(node));
  await publish(nodeClaimTarget(nodeClaim));
}

/** NodeRepairBlocked with upstream's message, at most once per 15 minutes per NodeClaim. */
export async function publishRepairBlocked(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  node: Node | undefined,
  message: string,
): Promise<void> {
  const key = `${nodeClaim.metadata.uid ?? nodeClaim.metadata.name}|${message}`;
  const now = deps.now().getTime();
  const last = lastBlocked.get(key);
  if (last !== undefined && now - last < BLOCKED_DEDUPE_MS) return;
  lastBlocked.set(key, now);
  await publishRepairEvent(deps, nodeClaim, node ? [node] : [], RepairEventReasons.blocked, message);
}
