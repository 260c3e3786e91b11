// Balanced consolidation's score against the worked examples of upstream's design
// (kubernetes-sigs/karpenter designs/balanced-consolidation.md, "Examples" and "Edge Cases"; prices in
// $/day as there, since only ratios count), upstream's eviction cost, and the score gating the search.
import { describe, expect, it } from 'vitest';
import {
  BALANCED_K,
  canPassThreshold,
  describeScore,
  nodeDisruptionCost,
  podEvictionCost,
  scoreMove,
} from '../../shared/decisions/consolidation/balanced.js';
import { underutilizedSearch } from '../../shared/decisions/consolidation/underutilized.js';
import type { InstanceType } from '../../shared/decisions/scheduling/types.js';

const mixed = { totalCost: 58.08, totalDisruptionCost: 80 };
const uniform = { totalCost: 48.4, totalDisruptionCost: 80 };

describe('Balanced score: the design document worked examples (k = 2)', () => {
  it.each([
    ['oversized node (replace by m7i.large)', 7.26, 3, mixed, 3.33, true],
    ['spare capacity delete', 4.84, 4, mixed, 1.67, true],
    ['marginal move', 2.42, 8, mixed, 0.42, false],
    ['well-packed node (no saving)', 0, 10, mixed, 0, false],
    ['uniform pool replace, the k = 2 boundary', 2.42, 8, uniform, 0.5, true],
    [
      'scale invariance: the oversized node in a 100-node pool',
      7.26,
      3,
      { totalCost: 580.8, totalDisruptionCost: 800 },
      3.33,
      true,
    ],
    [
      'heterogeneous disruption, node A (stateless)',
      4.84,
      4,
      { totalCost: 58.08, totalDisruptionCost: 107 },
      2.24,
      true,
    ],
    [
      'heterogeneous disruption, node B (model serving)',
      4.84,
      31,
      { totalCost: 58.08, totalDisruptionCost: 107 },
      0.29,
      false,
    ],
    ['cross-NodePool, on-demand pool delete', 4.84, 3, uniform, 2.67, true],
    ['cross-NodePool, spot pool delete', 1.45, 3, { totalCost: 14.5, totalDisruptionCost: 80 }, 2.67, true],
    [
      'cross-NodePool, spot node with 8 pods',
      1.45,
      8,
      { totalCost: 14.5, totalDisruptionCost: 80 },
      1.0,
      true,
    ],
    ['single-node pool delete', 4.84, 5, { totalCost: 4.84, totalDisruptionCost: 5 }, 1.0, true],
    ['a net loss', -1, 3, mixed, 0, false],
  ] as const)('%s', (_name, savings, disruption, totals, score, approved) => {
    const move = scoreMove(savings, disruption, totals);
    // The design rounds its fractions before dividing (2.24 for 2.23): one decimal is what it states.
    expect(move.score).toBeCloseTo(score, 1);
    expect(move.approved).toBe(approved);
    expect(move.threshold).toBe(0.5);
    expect(move.k).toBe(BALANCED_K);
  });

  it("says the score as upstream's events do", () => {
    expect(describeScore(scoreMove(2.42, 8, mixed))).toBe(
      'score 0.42 < threshold 0.50 (k: 2, savings 4.2%, disruption 10.0%)',
    );
  });

  it('an empty node is always worth deleting; nothing is scored against an empty pool', () => {
    expect(
      scoreMove(0.1, nodeDisruptionCost([]), { totalCost: 100, totalDisruptionCost: 1000 }).approved,
    ).toBe(true);
    expect(scoreMove(1, 1, { totalCost: 0, totalDisruptionCost: 0 }).approved).toBe(false);
  });

  it('skips simulating a candidate whose outright deletion would not pass', () => {
    expect(
      canPassThreshold({ price: 4.84, disruptionCost: 31 }, { totalCost: 58.08, totalDisruptionCost: 107 }),
    ).toBe(false);
    expect(
      canPassThreshold({ price: 4.84, disruptionCost: 4 }, { totalCost: 58.08, totalDisruptionCost: 107 }),
    ).toBe(true);
  });
});

describe('eviction cost (upstream EvictionCost)', () => {
  it('is 1 by default, moved by pod-deletion-cost / 2^27 and priority / 2^25, clamped to [-10, 10]', () => {
    const withCost = (cost: string) => ({
      annotations: { 'controller.kubernetes.io/pod-deletion-cost': cost },
    });
    expect(podEvictionCost({})).toBe(1);
    expect(podEvictionCost(withCost(String(2 ** 27)))).toBe(2);
    expect(podEvictionCost(withCost('2147483647'))).toBe(10);
    expect(podEvictionCost(withCost('-2147483648'))).toBe(-10);
    expect(podEvictionCost({ priority: 2 ** 25 })).toBe(2);
    expect(podEvictionCost(withCost('not a number'))).toBe(1);
  });

  // upstream pkg/utils/disruption/disruption.go EvictionCost: strconv.ParseFloat, then lo.Clamp.
  it.each([
    ['the default', {}, 1],
    ['priority 1000000000 (system-cluster-critical)', { priority: 2_000_000_000 }, 10],
    ['priority 100000 adds 100000 / 2^25', { priority: 100_000 }, 1 + 100_000 / 2 ** 25],
    ['priority -2^25 cancels the base cost', { priority: -(2 ** 25) }, 0],
    ['the lowest priority clamps to -10', { priority: -2_147_483_648 }, -10],
    ['deletion cost and priority add up', { cost: String(2 ** 27), priority: 2 ** 25 }, 3],
    ['a deletion cost Go reads with underscores', { cost: '134_217_728' }, 2],
    ['a deletion cost Go cannot read (" 5") adds nothing', { cost: ' 5' }, 1],
    ['an out-of-range deletion cost ("1e400") is an error in Go: ignored', { cost: '1e400' }, 1],
    ['"Inf" is a value in Go: clamped to 10', { cost: 'Inf' }, 10],
    ['"-Inf" clamps to -10', { cost: '-Inf' }, -10],
    ['"NaN" stays NaN, as lo.Clamp leaves it', { cost: 'NaN' }, NaN],
  ] as const)('%s', (_what, pod, expected) => {
    const annotations =
      'cost' in pod ? { 'controller.kubernetes.io/pod-deletion-cost': pod.cost } : undefined;
    const priority = 'priority' in pod ? pod.priority : undefined;
    expect(
      podEvictionCost({
        ...(annotations ? { annotations } : {}),
        ...(priority !== undefined ? { priority } : {}),
      }),
    ).toBe(expected);
  });

  it("priority enters the design's scoring: node B's model servers by priority instead of deletion cost", () => {
    // Three pods of priority 2^25 · 9 cost 10 each, as the design's deletion-cost 2147483647 pods do.
    const servers = Array.from({ length: 3 }, () => podEvictionCost({ priority: 9 * 2 ** 25 }));
    const nodeB = nodeDisruptionCost([podEvictionCost({}), ...servers]);
    expect(nodeB).toBe(32);
    expect(scoreMove(4.84, nodeB - 1, { totalCost: 58.08, totalDisruptionCost: 107 }).approved).toBe(false);
  });

  it("a node costs 1 plus its pods, a pod never below 0: the design's node B is 1 + 1 + 3 × 10", () => {
    expect(nodeDisruptionCost([1, 10, 10, 10])).toBe(32);
    expect(nodeDisruptionCost([-10])).toBe(1);
  });
});

describe('Balanced gates the Underutilized search', () => {
  const type = (name: string, cpu: number, price: number): InstanceType => ({
    name,
    labels: {
      'node.kubernetes.io/instance-type': name,
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
    capacity: { cpu: String(cpu), memory: `${cpu * 4}Gi`, pods: '110' },
    allocatable: { cpu: String(cpu), memory: `${cpu * 4}Gi`, pods: '110' },
    offerings: [{ zone: 'westus2-1', capacityType: 'on-demand', price, available: true }],
  });
  const types = [type('small', 2, 0.1), type('large', 8, 0.4)];
  const pod = {
    metadata: { name: 'a', namespace: 'apps', uid: 'a-uid' },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '100Mi' } } }] },
  };
  const input = (totals: { totalCost: number; totalDisruptionCost: number }) => ({
    candidates: [
      {
        name: 'n1-claim',
        nodeName: 'n1',
        price: 0.4,
        capacityType: 'on-demand' as const,
        instanceType: 'large',
        pods: [pod],
        disruptionCost: 2,
      },
    ],
    cluster: {
      nodePools: [
        {
          name: 'general',
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['on-demand'] },
          ],
          instanceTypes: types,
        },
      ],
      existingNodes: [],
    },
    pendingPods: [],
    allowed: 1,
    spotToSpot: false,
    balanced: { totals, k: BALANCED_K },
  });

  it('approves the replace when it saves enough of the pool for its disruption', () => {
    const search = underutilizedSearch(input({ totalCost: 0.4, totalDisruptionCost: 2 }));
    expect(search.command).toMatchObject({ decision: 'replace', score: { approved: true } });
    expect(search.scored).toHaveLength(1);
  });

  it('rejects the same replace in a pool where it is marginal, and says why', () => {
    // Deleting it would pass (0.4 / 1 ÷ 2 / 3 = 0.6), replacing it by small does not (0.3 / 1 ÷ 2 / 3 = 0.45).
    const search = underutilizedSearch(input({ totalCost: 1, totalDisruptionCost: 3 }));
    expect(search.command).toBeUndefined();
    expect(search.scored.map((s) => s.approved)).toEqual([false]);
    expect(search.unconsolidatable[0]?.why).toMatch(/^score 0\.45 < threshold 0\.50/);
  });
});
