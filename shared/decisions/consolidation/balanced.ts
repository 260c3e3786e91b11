// Balanced consolidation (upstream designs/balanced-consolidation.md, pkg/controllers/disruption/
// balanced.go): a move is worth making only when its share of the NodePool's cost saved is at least 1/k of
// its share of the NodePool's disruption, k = 2. A pod's disruption is upstream's EvictionCost (1, plus its
// pod-deletion-cost / 2^27 and its priority / 2^25, clamped to [-10, 10], never below 0 when scoring); a
// node's is 1 plus its pods', so an empty node still costs something and no fraction divides by zero.
// The NodePool totals count every node of the pool, candidates or not.

import { parseGoFloat } from '../go-values.js';

/** upstream v1.BalancedK. */
export const BALANCED_K = 2;

const POD_DELETION_COST_ANNOTATION = 'controller.kubernetes.io/pod-deletion-cost';
const EVICTION_COST_BOUND = 10;

export interface PoolTotals {
  /** USD/h of every node of the NodePool. */
  totalCost: number;
  /** The disruption cost of every node of the NodePool. */
  totalDisruptionCost: number;
}

export interface MoveScore {
  savingsFraction: number;
  disruptionFraction: number;
  k: number;
  /** savingsFraction / disruptionFraction; 0 when nothing is saved. */
  score: number;
  /** 1/k. */
  threshold: number;
  approved: boolean;
}

/**
 * upstream's EvictionCost of one pod: 1, plus the pod-deletion-cost annotation (read as Go's ParseFloat
 * reads it; an unreadable one adds nothing) / 2^27, plus spec.priority / 2^25, clamped to [-10, 10] as
 * lo.Clamp does (so a "NaN" annotation stays NaN, as upstream's does).
 */
export function podEvictionCost(pod: {
  annotations?: Readonly<Record<string, string>>;
  priority?: number;
}): number {
  let cost = 1;
  const annotation = pod.annotations?.[POD_DELETION_COST_ANNOTATION];
  const deletionCost = annotation === undefined ? undefined : parseGoFloat(annotation);
  if (deletionCost !== undefined) cost += deletionCost / 2 ** 27;
  if (pod.priority !== undefined) cost += pod.priority / 2 ** 25;
  return cost < -EVICTION_COST_BOUND
    ? -EVICTION_COST_BOUND
    : cost > EVICTION_COST_BOUND
      ? EVICTION_COST_BOUND
      : cost;
}

/** A node's disruption cost: 1 for the node, plus each pod's eviction cost (never below 0). */
export function nodeDisruptionCost(podEvictionCosts: readonly number[]): number {
  return 1 + podEvictionCosts.reduce((sum, cost) => sum + Math.max(0, cost), 0);
}

/** upstream ScoreMove and ScoreResult: the move's score against the NodePool's totals. */
export function scoreMove(
  savings: number,
  disruptionCost: number,
  totals: PoolTotals,
  k: number = BALANCED_K,
): MoveScore {
  const threshold = 1 / k;
  if (totals.totalCost <= 0 || totals.totalDisruptionCost <= 0) {
    return { savingsFraction: 0, disruptionFraction: 0, k, score: 0, threshold, approved: false };
  }
  const savingsFraction = savings / totals.totalCost;
  const disruptionFraction = disruptionCost / totals.totalDisruptionCost;
  const score =
    savingsFraction <= 0 ? 0 : disruptionFraction === 0 ? Infinity : savingsFraction / disruptionFraction;
  return { savingsFraction, disruptionFraction, k, score, threshold, approved: score >= threshold };
}

/**
 * upstream CanPassThreshold: a candidate's best move is deleting it outright (a replacement only lowers the
 * savings); if even that scores below 1/k, no move of it alone is worth simulating.
 */
export function canPassThreshold(
  candidate: { price: number; disruptionCost: number },
  totals: PoolTotals,
  k: number = BALANCED_K,
): boolean {
  return scoreMove(candidate.price, candidate.disruptionCost, totals, k).approved;
}

/** "score 0.42 < threshold 0.50 (k: 2, savings 4.2%, disruption 10.0%)", upstream's event text. */
export function describeScore(move: MoveScore): string {
  const percent = (fraction: number) => `${(fraction * 100).toFixed(1)}%`;
  return `score ${move.score.toFixed(2)} ${move.approved ? '>=' : '<'} threshold ${move.threshold.toFixed(2)} (k: ${move.k}, savings ${percent(move.savingsFraction)}, disruption ${percent(move.disruptionFraction)})`;
}
