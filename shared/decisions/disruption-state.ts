// Which NodeClaims are already being disrupted, and what a failed replacement left on a NodeClaim. The
// budget counts a node from the moment the sweep marks it (DisruptionReason) or its Node is tainted
// karpenter.sh/disrupted, until its NodeClaim is gone, so no interleaving of sweeps and orchestrations can
// let more nodes disrupt at once than the budget allows.
import { ConditionTypes, WellKnown, type NodeClaim } from '../models/karpenter.js';
import type { Node } from '../models/kube.js';
import type { BudgetNode } from './budgets.js';
import { findCondition, isConditionTrue } from './conditions.js';

export const DisruptionAnnotations = {
  /** On a NodeClaim whose replacement failed: failed attempts so far. */
  replacementAttempts: 'karpenter.azure.com/replacement-attempts',
  /** On a NodeClaim whose replacement failed: not tried again before this RFC 3339 time. */
  replacementBackoffUntil: 'karpenter.azure.com/replacement-backoff-until',
  /** On a replacement NodeClaim: the name of the NodeClaim it replaces. */
  replacementOf: 'karpenter.azure.com/replacement-of',
  /** On a replacement NodeClaim: the instance ID of the disruption command waiting for it (woken by it). */
  command: 'karpenter.azure.com/disruption-command',
} as const;

export function hasDisruptedTaint(node: Node): boolean {
  return (node.spec.taints ?? []).some(
    (t) => t.key === WellKnown.disruptedTaintKey && t.effect === 'NoSchedule',
  );
}

export function isNodeNotReady(node: Node): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status !== 'True';
}

/** DisruptionReason=True: the sweep picked this NodeClaim and a replacement is in flight. */
export function isMarkedForDisruption(nodeClaim: NodeClaim): boolean {
  return isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.disruptionReason);
}

/** The reason of a DisruptionReason=True mark (Drifted, Empty, Underutilized), or undefined. */
export function disruptionReasonOf(nodeClaim: NodeClaim): string | undefined {
  const mark = findCondition(nodeClaim.status?.conditions, ConditionTypes.disruptionReason);
  return mark?.status === 'True' ? mark.reason : undefined;
}

/** Deleting, marked, tainted disrupted, or its Node is NotReady. */
export function isDisrupting(nodeClaim: NodeClaim, nodes: readonly Node[]): boolean {
  if (nodeClaim.metadata.deletionTimestamp) return true;
  if (isMarkedForDisruption(nodeClaim)) return true;
  return nodes.some(
    (n) => hasDisruptedTaint(n) || Boolean(n.metadata.deletionTimestamp) || isNodeNotReady(n),
  );
}

/** The budget's view of one NodePool's NodeClaims. */
export function budgetNodesOf(
  nodeClaims: readonly NodeClaim[],
  nodesFor: (nodeClaim: NodeClaim) => readonly Node[],
): BudgetNode[] {
  return nodeClaims.map((nodeClaim) => ({
    name: nodeClaim.metadata.name,
    initialized: isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.initialized),
    managed: true,
    disrupting: isDisrupting(nodeClaim, nodesFor(nodeClaim)),
  }));
}

export interface ReplacementBackoff {
  attempts: number;
  backoffUntil?: string;
}

export function replacementBackoffOf(nodeClaim: NodeClaim): ReplacementBackoff {
  const annotations = nodeClaim.metadata.annotations ?? {};
  const attempts = Number(annotations[DisruptionAnnotations.replacementAttempts] ?? '0');
  const backoffUntil = annotations[DisruptionAnnotations.replacementBackoffUntil];
  return {
    attempts: Number.isInteger(attempts) && attempts > 0 ? attempts : 0,
    ...(backoffUntil ? { backoffUntil } : {}),
  };
}

/**
 * Annotations recording one more failed attempt. The hold doubles with each failure (capped at 8× the
 * base), so a node that cannot be replaced stops consuming the budget every few minutes.
 */
export function failedAttemptAnnotations(
  nodeClaim: NodeClaim,
  now: Date,
  baseBackoffMs: number,
): Record<string, string> {
  const attempts = replacementBackoffOf(nodeClaim).attempts + 1;
  const holdMs = baseBackoffMs * Math.min(8, 2 ** (attempts - 1));
  return {
    [DisruptionAnnotations.replacementAttempts]: String(attempts),
    [DisruptionAnnotations.replacementBackoffUntil]: new Date(now.getTime() + holdMs).toISOString(),
  };
}
