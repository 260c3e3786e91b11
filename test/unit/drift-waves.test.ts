// The wave plan `explain --what-if` gives for a NodePool change must count as the drift method and the
// rollout do, or the prediction would disagree with what then happens: these pin the counts of the
// brief's cases (Immediate, a canary, a percentage budget, a budget of 0) and the budget's source.
import { describe, expect, test } from 'vitest';
import type { BudgetNode } from '../../shared/decisions/budgets.js';
import { driftBudgetOf, driftWaves } from '../../shared/decisions/explain/drift-waves.js';
import type { Budget, NodePool } from '../../shared/models/index.js';

function pool(budgets: Budget[]): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: {
      disruption: { budgets },
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [],
        },
      },
    },
  };
}

function fleet(count: number, disrupting = 0): BudgetNode[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `n${i}`,
    initialized: true,
    managed: true,
    disrupting: i < disrupting,
  }));
}

const sizes = (plan: ReturnType<typeof driftWaves>) =>
  plan.kind === 'waves' ? plan.waves.map((w) => w.size) : plan.kind;

const now = new Date('2026-12-06T12:00:00Z');

describe('drift waves', () => {
  test('10 nodes at budget 3, Immediate: 4 waves of 3, 3, 3, 1', () => {
    const plan = driftWaves({ drifted: 10, budget: 3, policy: 'Immediate', canary: { count: 1 } });
    expect(sizes(plan)).toEqual([3, 3, 3, 1]);
    expect(plan.kind === 'waves' && plan.waves.every((w) => !w.canary && w.batches === 1)).toBe(true);
  });

  test('10 nodes at budget 3 with a canary of 1: 1 + 3 + 3 + 3, 4 waves too', () => {
    const plan = driftWaves({ drifted: 10, budget: 3, policy: 'Canary', canary: { count: 1 } });
    expect(sizes(plan)).toEqual([1, 3, 3, 3]);
    expect(plan.kind === 'waves' && plan.waves[0]).toMatchObject({ index: 1, canary: true, batches: 1 });
  });

  test('the rollout e2e case: 6 nodes, budget 2, canary 1 is 4 waves (1, 2, 2, 1)', () => {
    const plan = driftWaves({ drifted: 6, budget: 2, policy: 'Canary', canary: { count: 1 } });
    expect(sizes(plan)).toEqual([1, 2, 2, 1]);
  });

  test('a canary larger than the budget is one wave replaced in budget-sized batches', () => {
    const plan = driftWaves({ drifted: 10, budget: 2, policy: 'Canary', canary: { percent: 50 } });
    expect(sizes(plan)).toEqual([5, 2, 2, 1]);
    expect(plan.kind === 'waves' && plan.waves[0]?.batches).toBe(3);
  });

  test('a percentage budget: "30%" of 10 nodes allows 3 per wave, so 4 waves', () => {
    const budget = driftBudgetOf(pool([{ nodes: '30%' }]), fleet(10), now);
    expect(budget).toMatchObject({ perWave: 3, now: 3, total: 10, limitingBudget: 0 });
    expect(
      sizes(driftWaves({ drifted: 10, budget: budget.perWave, policy: 'Immediate', canary: { count: 1 } })),
    ).toEqual([3, 3, 3, 1]);
  });

  test('a percentage rounds up: "25%" of 10 nodes allows 3', () => {
    expect(driftBudgetOf(pool([{ nodes: '25%' }]), fleet(10), now).perWave).toBe(3);
  });

  test('nodes already disrupting take from now, not from the per-wave limit', () => {
    expect(driftBudgetOf(pool([{ nodes: '3' }]), fleet(10, 2), now)).toMatchObject({ perWave: 3, now: 1 });
  });

  test('a budget of 0 replaces nothing, ever, under either policy', () => {
    const budget = driftBudgetOf(pool([{ nodes: '0' }]), fleet(10), now);
    expect(budget.perWave).toBe(0);
    for (const policy of ['Immediate', 'Canary'] as const) {
      const plan = driftWaves({ drifted: 10, budget: budget.perWave, policy, canary: { count: 1 } });
      expect(plan.kind).toBe('never');
    }
  });

  test('a budget that does not cover Drifted leaves the whole pool as the limit', () => {
    const budget = driftBudgetOf(pool([{ nodes: '0', reasons: ['Underutilized'] }]), fleet(4), now);
    expect(budget.perWave).toBe(4);
  });

  test('an invalid budget allows nothing and says why', () => {
    const budget = driftBudgetOf(pool([{ nodes: 'three' }]), fleet(4), now);
    expect(budget.perWave).toBe(0);
    expect(budget.errors[0]).toContain('spec.disruption.budgets[0].nodes');
  });

  test('nothing drifted: no waves', () => {
    expect(driftWaves({ drifted: 0, budget: 3, policy: 'Canary', canary: { count: 1 } })).toEqual({
      kind: 'none',
    });
  });
});
