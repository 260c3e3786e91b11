// How a NodePool change would roll through its drifted nodes, told before it happens: the waves the
// drift method and the rollout would replace them in, at the NodePool's Drifted budget. `explain
// --what-if` answers "how long would this take" with it, so it must count exactly as the live path does:
// the budget comes from budgets.ts allowedDisruptions, the canary and each later wave from rollout.ts
// canarySize and waveSize, and a budget that allows nothing is said as "never", not as a huge number.
// Pure; the figures are estimates at today's node count (a percentage budget of a pool whose size moves
// during the rollout allows what it allows then).
import { allowedDisruptions, type BudgetNode } from '../budgets.js';
import type { NodePool } from '../../models/karpenter.js';
import { canarySize, waveSize, type RolloutCount, type RolloutPolicy } from '../rollout.js';

export interface DriftWave {
  /** 1 for the first wave (the canary under the Canary policy). */
  index: number;
  /** How many drifted nodes the wave replaces. */
  size: number;
  /** The canary wave (Canary policy only). */
  canary: boolean;
  /**
   * Under the Canary policy a wave larger than the budget (a canary of 5 at budget "2") is replaced in
   * several budget-sized batches within the wave; 1 otherwise.
   */
  batches: number;
}

export type DriftWavePlan =
  | { kind: 'none' }
  | { kind: 'never'; reason: string }
  | { kind: 'waves'; policy: RolloutPolicy; budget: number; waves: DriftWave[] };

export interface DriftWaveInput {
  /** Drifted nodes to replace. */
  drifted: number;
  /** How many nodes the Drifted budget lets be disrupting at once (the limit, not what is left of it now). */
  budget: number;
  policy: RolloutPolicy;
  /** ROLLOUT_CANARY (Canary policy only). */
  canary: RolloutCount;
}

/**
 * The waves: under Immediate, ceil(n / budget) waves of the budget (the last one the rest); under Canary,
 * the canary, then waves of what the budget allows (at least 1, as the rollout's next wave), as
 * docs/rollouts.md tells. A budget of 0 replaces nothing, ever, in either policy: the drift method takes
 * min(budget, room).
 */
export function driftWaves(input: DriftWaveInput): DriftWavePlan {
  const { drifted, budget, policy } = input;
  if (drifted <= 0) return { kind: 'none' };
  if (!(budget > 0)) {
    return {
      kind: 'never',
      reason: 'the Drifted disruption budget allows 0 nodes: no drifted node is replaced while it does',
    };
  }
  const waves: DriftWave[] = [];
  let left = drifted;
  const push = (size: number, canary: boolean) => {
    waves.push({
      index: waves.length + 1,
      size,
      canary,
      batches: policy === 'Canary' ? Math.ceil(size / budget) : 1,
    });
    left -= size;
  };
  if (policy === 'Immediate') {
    while (left > 0) push(Math.min(budget, left), false);
  } else {
    push(canarySize(input.canary, left), true);
    while (left > 0) push(waveSize(budget, left), false);
  }
  return { kind: 'waves', policy, budget, waves };
}

export interface DriftBudget {
  /** The limit per wave: what the budget allows with nothing disrupting. */
  perWave: number;
  /** What it allows now, less the nodes already disrupting. */
  now: number;
  /** Managed, initialized nodes the percentages are taken of. */
  total: number;
  /** The index of the budget that set the limit, when one did. */
  limitingBudget?: number;
  /** Invalid budgets (which allow nothing), as allowedDisruptions reports them. */
  errors: string[];
}

/** The NodePool's Drifted budget for the wave plan, from the same function the disruption step asks. */
export function driftBudgetOf(nodePool: NodePool, nodes: readonly BudgetNode[], now: Date): DriftBudget {
  const current = allowedDisruptions(nodePool, 'Drifted', nodes, now);
  const idle = allowedDisruptions(
    nodePool,
    'Drifted',
    nodes.map((n) => ({ ...n, disrupting: false })),
    now,
  );
  return {
    perWave: idle.allowed,
    now: current.allowed,
    total: idle.total,
    ...(idle.limitingBudget !== undefined ? { limitingBudget: idle.limitingBudget } : {}),
    errors: idle.errors.map((e) => e.message),
  };
}
