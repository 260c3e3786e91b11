// Which drifted NodeClaims of a NodePool to start replacing in this sweep. The budget decides how
// many (see budgets.ts); this decides which, oldest drift first so no node waits forever behind
// newer ones, with the name as a tie-breaker so concurrent sweeps pick the same nodes.
import { ConditionTypes, WellKnown, type NodeClaim, type NodePool } from '../models/karpenter.js';
import type { Node } from '../models/kube.js';
import { findCondition, isConditionTrue } from './conditions.js';

export interface ReplacementCandidateInput {
  name: string;
  /** The NodeClaim's karpenter.sh/nodepool label. */
  nodePool: string | undefined;
  /** When Drifted became True; absent when the NodeClaim is not drifted. */
  driftedSince?: string | Date;
  initialized: boolean;
  /** NotReady, deleting, tainted karpenter.sh/disrupted, or with a replacement in flight. */
  disrupting: boolean;
  /** Value of karpenter.sh/do-not-disrupt on the Node or the NodeClaim; "true" protects the node. */
  doNotDisrupt?: string;
  /**
   * Why the node's pods forbid disrupting it now (candidates.ts podsBlockDisruption), when that holds the
   * node back: only without a terminationGracePeriod (upstream's eventual disruption ignores pod blocks
   * when one bounds the drain).
   */
  podsBlock?: string;
  /** A failed replacement attempt holds the node back until then. */
  backoffUntil?: string | Date;
  /** When only the failure time is known, the hold lasts `retryBackoffMs` from it. */
  lastAttemptFailedAt?: string | Date;
}

export interface SelectReplacementCandidatesInput {
  nodePool: NodePool;
  nodeClaims: readonly ReplacementCandidateInput[];
  /** From allowedDisruptions: how many more may start now. */
  allowed: number;
  now: Date;
  retryBackoffMs?: number;
}

export const REPLACEMENT_RETRY_BACKOFF_MS = 5 * 60_000;

function toMillis(value: string | Date | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = value instanceof Date ? value.getTime() : Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

function inBackoff(candidate: ReplacementCandidateInput, now: Date, retryBackoffMs: number): boolean {
  const until = toMillis(candidate.backoffUntil);
  if (until !== undefined) return now.getTime() < until;
  const failedAt = toMillis(candidate.lastAttemptFailedAt);
  return failedAt !== undefined && now.getTime() < failedAt + retryBackoffMs;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Why a drifted NodeClaim is not replaced now though the budget had room, with the one line a user reads,
 * or undefined when it is eligible. Not drifted: not asked.
 */
export function replacementHold(
  candidate: ReplacementCandidateInput,
  now: Date,
  retryBackoffMs: number = REPLACEMENT_RETRY_BACKOFF_MS,
): { cause: 'NotReady' | 'DoNotDisrupt' | 'PDB' | 'CommandBackoff'; message: string } | undefined {
  if (!candidate.initialized) return { cause: 'NotReady', message: 'node is not initialized' };
  if (candidate.disrupting) {
    return { cause: 'NotReady', message: 'node is deleting, marked for deletion or NotReady' };
  }
  if (candidate.doNotDisrupt === 'true') {
    return {
      cause: 'DoNotDisrupt',
      message: `Disruption is blocked through the "${WellKnown.doNotDisruptAnnotation}" annotation`,
    };
  }
  if (candidate.podsBlock !== undefined) {
    return {
      cause: candidate.podsBlock.startsWith('Pod ') ? 'DoNotDisrupt' : 'PDB',
      message: candidate.podsBlock,
    };
  }
  if (inBackoff(candidate, now, retryBackoffMs)) {
    const until = toMillis(candidate.backoffUntil);
    return {
      cause: 'CommandBackoff',
      message: `A replacement failed recently; retried after its backoff${until !== undefined ? ` (${new Date(until).toISOString()})` : ''}`,
    };
  }
  return undefined;
}

/** Names of the NodeClaims to replace now, at most `allowed`, oldest drift first. */
export function selectReplacementCandidates(input: SelectReplacementCandidatesInput): string[] {
  const limit = Math.max(0, Math.floor(input.allowed));
  if (limit === 0) return [];
  const retryBackoffMs = input.retryBackoffMs ?? REPLACEMENT_RETRY_BACKOFF_MS;
  const eligible = input.nodeClaims.filter(
    (c) =>
      c.nodePool === input.nodePool.metadata.name &&
      c.driftedSince !== undefined &&
      c.initialized &&
      !c.disrupting &&
      c.doNotDisrupt !== 'true' &&
      c.podsBlock === undefined &&
      !inBackoff(c, input.now, retryBackoffMs),
  );
  // A drift time that cannot be read sorts after every readable one rather than jumping the queue.
  const since = (c: ReplacementCandidateInput): number =>
    toMillis(c.driftedSince) ?? Number.POSITIVE_INFINITY;
  return eligible
    .sort((a, b) => since(a) - since(b) || compareText(a.name, b.name))
    .slice(0, limit)
    .map((c) => c.name);
}

/**
 * Plain candidate data from a NodeClaim, its Node when there is one, and facts only the caller
 * knows (whether it is disrupting, and any backoff recorded by a failed replacement).
 */
export function replacementCandidateFromNodeClaim(
  nodeClaim: NodeClaim,
  facts: {
    node?: Node;
    disrupting: boolean;
    backoffUntil?: string | Date;
    lastAttemptFailedAt?: string | Date;
    /** podsBlockDisruption over the Node's pods, when the caller read them. */
    podsBlock?: string;
  },
): ReplacementCandidateInput {
  const conditions = nodeClaim.status?.conditions;
  const drifted = findCondition(conditions, ConditionTypes.drifted);
  const onNode = facts.node?.metadata.annotations?.[WellKnown.doNotDisruptAnnotation];
  const onClaim = nodeClaim.metadata.annotations?.[WellKnown.doNotDisruptAnnotation];
  const doNotDisrupt = onNode === 'true' || onClaim === 'true' ? 'true' : (onNode ?? onClaim);
  return {
    name: nodeClaim.metadata.name,
    nodePool: nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel],
    ...(drifted?.status === 'True' ? { driftedSince: drifted.lastTransitionTime } : {}),
    initialized: isConditionTrue(conditions, ConditionTypes.initialized),
    disrupting: facts.disrupting,
    ...(doNotDisrupt !== undefined ? { doNotDisrupt } : {}),
    ...(facts.podsBlock !== undefined && !nodeClaim.spec.terminationGracePeriod
      ? { podsBlock: facts.podsBlock }
      : {}),
    ...(facts.backoffUntil !== undefined ? { backoffUntil: facts.backoffUntil } : {}),
    ...(facts.lastAttemptFailedAt !== undefined ? { lastAttemptFailedAt: facts.lastAttemptFailedAt } : {}),
  };
}
