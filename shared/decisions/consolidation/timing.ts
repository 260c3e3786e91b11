// When a node may be consolidated and when a NodeClaim expires: upstream Karpenter's Consolidatable
// condition (consolidateAfter counted from the last pod event, or from initialization when no pod event
// was seen) and expiration controller (expireAfter counted from the NodeClaim's creation).
import { ConditionTypes, KarpenterDefaults, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import { findCondition } from '../conditions.js';
import { DurationParseError, NEVER, parseDuration } from '../duration.js';

export const CONSOLIDATABLE_CONDITION = 'Consolidatable';

export type ConsolidateAfter = { enabled: true; ms: number } | { enabled: false; why: string };

/** The NodePool's consolidateAfter; "Never" (or a value the CRD should have refused) disables it. */
export function consolidateAfterOf(nodePool: NodePool): ConsolidateAfter {
  const text = nodePool.spec.disruption?.consolidateAfter ?? KarpenterDefaults.consolidateAfter;
  try {
    const ms = parseDuration(text);
    return ms === NEVER ? { enabled: false, why: 'consolidateAfter is Never' } : { enabled: true, ms };
  } catch (error) {
    if (!(error instanceof DurationParseError)) throw error;
    return { enabled: false, why: `spec.disruption.consolidateAfter: ${error.message}` };
  }
}

function parsedTime(text: string | undefined): number | undefined {
  const ms = Date.parse(text ?? '');
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * When the NodeClaim becomes consolidatable, or undefined while it cannot (not initialized, or
 * consolidation disabled): consolidateAfter after the last pod event, else after initialization.
 */
export function consolidatableAt(nodeClaim: NodeClaim, nodePool: NodePool): Date | undefined {
  const after = consolidateAfterOf(nodePool);
  if (!after.enabled) return undefined;
  const initialized = findCondition(nodeClaim.status?.conditions, ConditionTypes.initialized);
  if (initialized?.status !== 'True') return undefined;
  const since = parsedTime(nodeClaim.status?.lastPodEventTime) ?? parsedTime(initialized.lastTransitionTime);
  return since === undefined ? undefined : new Date(since + after.ms);
}

/**
 * Upstream's IsUnderConsolidateAfter: an initialized NodeClaim whose consolidateAfter (not Never, not 0)
 * has not passed since its last pod event, or since initialization. A consolidation moves no pods onto
 * such a node, so a node that just received pods (or just came up) settles before it is packed further.
 */
export function isUnderConsolidateAfter(nodeClaim: NodeClaim, nodePool: NodePool, now: Date): boolean {
  const after = consolidateAfterOf(nodePool);
  if (!after.enabled || after.ms === 0) return false;
  const at = consolidatableAt(nodeClaim, nodePool);
  return at !== undefined && now.getTime() < at.getTime();
}

export function isConsolidatable(nodeClaim: NodeClaim, nodePool: NodePool, now: Date): boolean {
  const at = consolidatableAt(nodeClaim, nodePool);
  return at !== undefined && at.getTime() <= now.getTime();
}

/** When the NodeClaim expires, or undefined for "Never" (or a value the CRD should have refused). */
export function expiresAt(nodeClaim: NodeClaim): Date | undefined {
  const text = nodeClaim.spec.expireAfter ?? KarpenterDefaults.expireAfter;
  const created = parsedTime(nodeClaim.metadata.creationTimestamp);
  if (created === undefined) return undefined;
  try {
    const ms = parseDuration(text);
    return ms === NEVER ? undefined : new Date(created + ms);
  } catch (error) {
    if (error instanceof DurationParseError) return undefined;
    throw error;
  }
}

export function isExpired(nodeClaim: NodeClaim, now: Date): boolean {
  if (nodeClaim.metadata.deletionTimestamp) return false;
  const at = expiresAt(nodeClaim);
  return at !== undefined && at.getTime() <= now.getTime();
}
