// Static NodePools (spec.replicas): how many NodeClaims to create and which to remove. Replacements in
// flight (their old NodeClaim still exists and is not being deleted) stand in for the node they replace,
// so they are neither counted nor removed. limits.nodes caps every NodeClaim the pool has.
import { isConditionTrue } from './conditions.js';
import { DisruptionAnnotations, isMarkedForDisruption } from './disruption-state.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../models/karpenter.js';

export interface StaticReplicaPlan {
  /** How many NodeClaims to create now. */
  create: number;
  /** Names of NodeClaims to delete now, least valuable first. */
  remove: string[];
  /** NodeClaims that count toward spec.replicas. */
  counted: number;
}

export function nodeLimitOf(nodePool: NodePool): number | undefined {
  const raw = nodePool.spec.limits?.nodes;
  if (raw === undefined) return undefined;
  const value = Number(raw);
  return Number.isInteger(value) && value >= 0 ? value : undefined;
}

function isReplacementInFlight(nodeClaim: NodeClaim, byName: ReadonlyMap<string, NodeClaim>): boolean {
  const oldName = nodeClaim.metadata.annotations?.[DisruptionAnnotations.replacementOf];
  if (!oldName) return false;
  const old = byName.get(oldName);
  return old !== undefined && !old.metadata.deletionTimestamp;
}

const created = (c: NodeClaim): number => Date.parse(c.metadata.creationTimestamp ?? '') || 0;

export function planStaticReplicas(nodePool: NodePool, nodeClaims: readonly NodeClaim[]): StaticReplicaPlan {
  const replicas = nodePool.spec.replicas ?? 0;
  const byName = new Map(nodeClaims.map((c) => [c.metadata.name, c]));
  const live = nodeClaims.filter((c) => !c.metadata.deletionTimestamp);
  const counted = live.filter((c) => !isReplacementInFlight(c, byName));
  if (counted.length < replicas) {
    const limit = nodeLimitOf(nodePool);
    const room = limit === undefined ? Infinity : Math.max(0, limit - live.length);
    return { create: Math.min(replicas - counted.length, room), remove: [], counted: counted.length };
  }
  // Nodes being replaced are already on their way out through the replacement; not-initialized nodes
  // serve nothing yet; among the rest the newest go first, so long-running nodes are kept.
  const removable = counted
    .filter((c) => !isMarkedForDisruption(c))
    .sort((a, b) => {
      const ai = isConditionTrue(a.status?.conditions, ConditionTypes.initialized) ? 1 : 0;
      const bi = isConditionTrue(b.status?.conditions, ConditionTypes.initialized) ? 1 : 0;
      return ai - bi || created(b) - created(a) || (a.metadata.name < b.metadata.name ? 1 : -1);
    });
  return {
    create: 0,
    remove: removable.slice(0, counted.length - replicas).map((c) => c.metadata.name),
    counted: counted.length,
  };
}

/** Names for new replicas: deterministic per NodePool, skipping names that are taken. */
export function staticReplicaNames(
  count: number,
  taken: ReadonlySet<string>,
  nameFor: (slot: number) => string,
): string[] {
  const names: string[] = [];
  for (let slot = 0; names.length < count; slot++) {
    const name = nameFor(slot);
    if (!taken.has(name)) names.push(name);
  }
  return names;
}
