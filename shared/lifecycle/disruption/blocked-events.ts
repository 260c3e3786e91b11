// Events that tell a user why a node is not being disrupted, where they look (`kubectl describe` of the
// NodeClaim, its Node, or the NodePool), with upstream Karpenter's reasons and messages. Upstream's
// recorder drops a repeat of the same event within a dedupe window (2 minutes; 1 minute for a NodePool's
// budget, which can change every minute; 15 minutes for Unconsolidatable, whose reasons change slowly);
// this process does the same, so a sweep every few seconds does not write an event per blocked node each
// time.
import type { EventReason } from '../../decisions/event-reasons.js';
import { budgetBlockedMessage } from '../../decisions/explain/disruption-record.js';
import { nodeTarget, type EventTarget } from '../../kube/events.js';
import type { DisruptionReason, NodeClaim, NodePool } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { createEventDedupe } from '../../kube/event-dedupe.js';
import { nodeClaimTarget } from '../nodeclaims/nodeclaim-writes.js';

export const DISRUPTION_BLOCKED = 'DisruptionBlocked' satisfies EventReason;
export const DISRUPTION_TERMINATING = 'DisruptionTerminating' satisfies EventReason;
export const UNCONSOLIDATABLE = 'Unconsolidatable' satisfies EventReason;

const NODE_DEDUPE_MS = 2 * 60_000;
const NODEPOOL_DEDUPE_MS = 60_000;
const UNCONSOLIDATABLE_DEDUPE_MS = 15 * 60_000;

const dedupe = createEventDedupe();
const firstInWindow = dedupe.firstInWindow;

/** Forgets what was sent (tests that count events start from a clean slate). */
export function resetEventDedupe(): void {
  dedupe.reset();
}

export function nodePoolTarget(nodePool: NodePool): EventTarget {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    name: nodePool.metadata.name,
    ...(nodePool.metadata.uid ? { uid: nodePool.metadata.uid } : {}),
  };
}

type NodeEventPublisher = (
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  node: Node | undefined,
  message: string,
) => Promise<void>;

/** An event on the Node and the NodeClaim, once per dedupe window for the same reason and message. */
function nodeEventPublisher(reason: EventReason, windowMs: number): NodeEventPublisher {
  return async (deps, nodeClaim, node, message) => {
    const key = `${nodeClaim.metadata.uid ?? nodeClaim.metadata.name}|${reason}|${message}`;
    if (!firstInWindow(key, deps.now().getTime(), windowMs)) return;
    if (node) await deps.events.normal(nodeTarget(node), reason, message);
    await deps.events.normal(nodeClaimTarget(nodeClaim), reason, message);
  };
}

/** DisruptionBlocked: a blocker the user can act on keeps the node from being a candidate. */
export const publishNodeBlocked = nodeEventPublisher(DISRUPTION_BLOCKED, NODE_DEDUPE_MS);

/**
 * Unconsolidatable: a candidate consolidation looked at and cannot consolidate now, or whose last command
 * failed and is held (the message says until when).
 */
export const publishUnconsolidatable = nodeEventPublisher(UNCONSOLIDATABLE, UNCONSOLIDATABLE_DEDUPE_MS);

/** DisruptionBlocked on the NodePool when its budget for `reason` allows nothing now. */
export async function publishBudgetBlocked(
  deps: LifecycleDependencies,
  nodePool: NodePool,
  reason: DisruptionReason,
): Promise<void> {
  const key = `${nodePool.metadata.uid ?? nodePool.metadata.name}|budget|${reason}`;
  if (!firstInWindow(key, deps.now().getTime(), NODEPOOL_DEDUPE_MS)) return;
  await deps.events.normal(nodePoolTarget(nodePool), DISRUPTION_BLOCKED, budgetBlockedMessage(reason));
}

/** DisruptionTerminating on the NodeClaim and its Node: this node is going, and why. */
export async function publishTerminating(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  nodes: readonly Node[],
  reason: string,
): Promise<void> {
  for (const node of nodes) {
    await deps.events.normal(nodeTarget(node), DISRUPTION_TERMINATING, `Disrupting Node: ${reason}`);
  }
  await deps.events.normal(
    nodeClaimTarget(nodeClaim),
    DISRUPTION_TERMINATING,
    `Disrupting NodeClaim: ${reason}`,
  );
}
