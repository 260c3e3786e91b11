import { describe, expect, it } from 'vitest';
import {
  commandKey,
  computeConsolidation,
  orderCandidates,
  underutilizedCommand,
  underutilizedSearch,
  type UnderutilizedCandidate,
  type UnderutilizedInput,
} from '../../shared/decisions/consolidation/underutilized.js';
import { solve } from '../../shared/decisions/scheduling/solve.js';
import type { ExistingNode, InstanceType, SchedulingPod } from '../../shared/decisions/scheduling/types.js';

const sizes: [string, number, number][] = [
  ['small', 2, 0.1],
  ['medium', 4, 0.2],
  ['large', 8, 0.4],
];

function instanceType(name: string, cpu: number, price: number, spotCount = 1): InstanceType {
  return {
    name,
    labels: {
      'node.kubernetes.io/instance-type': name,
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
    },
    capacity: { cpu: String(cpu), memory: `${cpu * 4}Gi`, pods: '110' },
    allocatable: { cpu: String(cpu), memory: `${cpu * 4}Gi`, pods: '110' },
    offerings: [
      { zone: 'westus2-1', capacityType: 'on-demand', price, available: true },
      ...Array.from({ length: spotCount }, () => ({
        zone: 'westus2-1',
        capacityType: 'spot' as const,
        price: price / 3,
        available: true,
      })),
    ],
  };
}

const types = sizes.map(([n, cpu, price]) => instanceType(n, cpu, price));

function pod(name: string, cpu: string): SchedulingPod {
  return {
    metadata: { name, namespace: 'apps', uid: `${name}-uid` },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu, memory: '100Mi' } } }] },
  };
}

function node(
  name: string,
  size: string,
  pods: SchedulingPod[],
  extra: Partial<ExistingNode> = {},
): ExistingNode {
  const type = types.find((t) => t.name === size) as InstanceType;
  return {
    name,
    kind: 'Node',
    nodePoolName: 'general',
    labels: { ...type.labels, 'kubernetes.io/hostname': name, 'karpenter.sh/capacity-type': 'on-demand' },
    allocatable: type.allocatable,
    pods: pods.map((p) => ({
      namespace: 'apps',
      name: p.metadata.name,
      requests: { cpu: p.spec.containers[0]?.resources?.requests?.cpu ?? '0' },
    })),
    initialized: true,
    ...extra,
  };
}

function candidate(
  n: ExistingNode,
  pods: SchedulingPod[],
  extra: Partial<UnderutilizedCandidate> = {},
): UnderutilizedCandidate {
  const size = n.labels['node.kubernetes.io/instance-type'] ?? '';
  return {
    name: `${n.name}-claim`,
    nodeName: n.name,
    price: sizes.find(([s]) => s === size)?.[2] ?? Infinity,
    capacityType: 'on-demand',
    instanceType: size,
    pods,
    disruptionCost: 1 + pods.length,
    ...extra,
  };
}

function input(
  existing: ExistingNode[],
  candidates: UnderutilizedCandidate[],
  extra: Partial<UnderutilizedInput> = {},
  capacityTypes = ['on-demand', 'spot'],
): UnderutilizedInput {
  return {
    candidates: orderCandidates(candidates),
    cluster: {
      nodePools: [
        {
          name: 'general',
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: capacityTypes }],
          instanceTypes: extra.cluster?.nodePools[0]?.instanceTypes ?? types,
        },
      ],
      existingNodes: existing,
    },
    pendingPods: [],
    allowed: 10,
    spotToSpot: false,
    ...extra,
  };
}

describe('underutilized consolidation', () => {
  it('deletes two nodes whose pods fit on the rest (multi-node, N → 0)', () => {
    const [p1, p2, p3] = [pod('a', '1'), pod('b', '1'), pod('c', '2')];
    const n1 = node('n1', 'medium', [p1]);
    const n2 = node('n2', 'medium', [p2]);
    const n3 = node('n3', 'medium', [p3]);
    const command = underutilizedCommand(
      input([n1, n2, n3], [candidate(n1, [p1]), candidate(n2, [p2])], {}, ['on-demand']),
    );
    expect(command).toMatchObject({ decision: 'delete', savings: 0.4 });
    expect(command?.candidates.map((c) => c.name).sort()).toEqual(['n1-claim', 'n2-claim']);
  });

  it('replaces two half-empty nodes with one strictly cheaper node (N → 1)', () => {
    const [p1, p2] = [pod('a', '1'), pod('b', '1')];
    const n1 = node('n1', 'large', [p1]);
    const n2 = node('n2', 'large', [p2]);
    const command = underutilizedCommand(
      input([n1, n2], [candidate(n1, [p1]), candidate(n2, [p2])], {}, ['on-demand']),
    );
    expect(command?.decision).toBe('replace');
    if (command?.decision !== 'replace') return;
    expect(command.candidates).toHaveLength(2);
    // Worst price strictly below 0.8 and, as the candidates are large, below one large node (0.4).
    expect(command.replacement.instanceTypeNames).toEqual(['small', 'medium']);
    expect(command.replacement.requirements).toContainEqual({
      key: 'node.kubernetes.io/instance-type',
      operator: 'In',
      values: ['small', 'medium'],
    });
  });

  it('under MIN_VALUES_POLICY=BestEffort, does not replace with a NodeClaim whose minValues would be lowered', () => {
    // The pod of 5 cpu fits only `large`: one instance type where the NodePool asks for 2.
    const p1 = pod('a', '5');
    const n1 = node('n1', 'large', [p1]);
    const flexible = (minValuesPolicy: 'Strict' | 'BestEffort'): UnderutilizedInput => {
      const base = input([n1], [candidate(n1, [p1], { price: 10 })], {}, ['on-demand']);
      const pool = base.cluster.nodePools[0]!;
      return {
        ...base,
        cluster: {
          ...base.cluster,
          nodePools: [
            {
              ...pool,
              requirements: [
                ...pool.requirements,
                { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 },
              ],
            },
          ],
          options: { minValuesPolicy },
        },
      };
    };
    const relaxed = computeConsolidation(flexible('BestEffort').candidates, flexible('BestEffort'));
    expect(relaxed).toEqual({
      none: "the replacement would need the NodePool's minValues lowered (BestEffort)",
    });
    const strict = computeConsolidation(flexible('Strict').candidates, flexible('Strict'));
    expect(strict).toMatchObject({ none: expect.stringMatching(/would not schedule: .*minValues 2/) });
  });

  it('replaces one oversized node with a cheaper one (single-node)', () => {
    const p1 = pod('a', '1');
    const n1 = node('n1', 'large', [p1]);
    const command = underutilizedCommand(input([n1], [candidate(n1, [p1])], {}, ['on-demand']));
    expect(command).toMatchObject({
      decision: 'replace',
      replacement: { instanceTypeNames: ['small', 'medium'] },
    });
  });

  it('keeps a node no cheaper replacement exists for', () => {
    const p1 = pod('a', '1500m');
    const n1 = node('n1', 'small', [p1]);
    expect(computeConsolidation([candidate(n1, [p1])], input([n1], [], {}, ['on-demand']))).toEqual({
      none: 'no replacement is cheaper than $0.1000/h',
    });
  });

  it('never replaces m nodes with n > 1', () => {
    const [p1, p2] = [pod('a', '7'), pod('b', '7')];
    const n1 = node('n1', 'large', [p1]);
    const n2 = node('n2', 'large', [p2]);
    expect(computeConsolidation([candidate(n1, [p1]), candidate(n2, [p2])], input([n1, n2], []))).toEqual({
      none: 'the pods would need 2 new nodes',
    });
    expect(
      underutilizedCommand(input([n1, n2], [candidate(n1, [p1]), candidate(n2, [p2])], {}, ['on-demand'])),
    ).toBeUndefined();
  });

  it('keeps a node whose pod fits nowhere', () => {
    const p1 = pod('a', '16');
    const n1 = node('n1', 'large', [p1]);
    const outcome = computeConsolidation([candidate(n1, [p1])], input([n1], []));
    expect('none' in outcome && outcome.none).toMatch(/^pod apps\/a would not schedule/);
  });

  it('pins spot when the NodePool allows it: an on-demand node may become a cheaper spot node', () => {
    const p1 = pod('a', '1');
    const n1 = node('n1', 'medium', [p1]);
    const command = underutilizedCommand(input([n1], [candidate(n1, [p1])]));
    expect(command?.decision).toBe('replace');
    if (command?.decision !== 'replace') return;
    expect(command.replacement.requirements).toContainEqual({
      key: 'karpenter.sh/capacity-type',
      operator: 'In',
      values: ['spot'],
    });
  });

  it('does not replace spot with spot unless enabled, and then needs 15 cheaper options for one node', () => {
    const p1 = pod('a', '1');
    const n1 = node('n1', 'large', [p1]);
    const spot = candidate(n1, [p1], { capacityType: 'spot', price: 0.4 / 3 });
    expect(computeConsolidation([spot], input([n1], [], {}, ['spot']))).toEqual({
      none: 'spot-to-spot consolidation is disabled',
    });
    expect(computeConsolidation([spot], input([n1], [], { spotToSpot: true }, ['spot']))).toEqual({
      none: 'only 2 cheaper spot options (15 needed)',
    });
    const many = Array.from({ length: 16 }, (_, i) =>
      instanceType(`type-${String(i).padStart(2, '0')}`, 2, 0.05 + i * 0.001),
    );
    const withMany = input([n1], [], { spotToSpot: true }, ['spot']);
    const [pool] = withMany.cluster.nodePools;
    if (!pool) throw new Error('no NodePool');
    withMany.cluster.nodePools[0] = { ...pool, instanceTypes: [...types, ...many] };
    const outcome = computeConsolidation([spot], withMany);
    expect(
      'command' in outcome &&
        outcome.command.decision === 'replace' &&
        outcome.command.replacement.instanceTypeNames,
    ).toHaveLength(15);
  });

  it('does not move pods onto a node that is not initialized', () => {
    const p1 = pod('a', '1');
    const n1 = node('n1', 'medium', [p1]);
    const fresh = node('fresh', 'medium', [], { initialized: false });
    const outcome = computeConsolidation([candidate(n1, [p1])], input([n1, fresh], [], {}, ['on-demand']));
    expect(outcome).toEqual({ none: 'pod a would need a node that is not initialized yet' });
  });

  it('respects the budget: none when the Underutilized budget allows nothing', () => {
    const [p1, p2, p3] = [pod('a', '1'), pod('b', '1'), pod('c', '2')];
    const n1 = node('n1', 'medium', [p1]);
    const n2 = node('n2', 'medium', [p2]);
    const n3 = node('n3', 'medium', [p3]);
    expect(
      underutilizedCommand(input([n1, n2, n3], [candidate(n1, [p1]), candidate(n2, [p2])], { allowed: 0 })),
    ).toBeUndefined();
    const one = underutilizedCommand(
      input([n1, n2, n3], [candidate(n1, [p1]), candidate(n2, [p2])], { allowed: 1 }, ['on-demand']),
    );
    expect(one?.candidates).toHaveLength(1);
  });

  it('orders candidates by price per disruption cost, most first: an idle $0.20 node before a $0.40 node with two pods', () => {
    const a = candidate(node('a', 'large', []), [pod('x', '1'), pod('y', '1')]);
    const b = candidate(node('b', 'medium', []), []);
    expect(orderCandidates([a, b]).map((c) => c.name)).toEqual(['b-claim', 'a-claim']);
  });

  describe('what launch would refuse and what failed lately', () => {
    const blocked = (names: string[]): InstanceType[] =>
      types.map((t) =>
        names.includes(t.name)
          ? { ...t, offerings: t.offerings.map((o) => ({ ...o, available: false })) }
          : t,
      );
    const pool = (instanceTypes: InstanceType[]) => ({
      name: 'general',
      requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In' as const, values: ['on-demand'] }],
      instanceTypes,
    });

    it('never offers a replacement whose offerings are blocked, and says which blocked one would have served', () => {
      const p1 = pod('a', '1');
      const n1 = node('n1', 'large', [p1]);
      const withBlocks = input([n1], [candidate(n1, [p1])], {}, ['on-demand']);
      withBlocks.cluster.nodePools[0] = pool(blocked(['small', 'medium']));
      withBlocks.unblockedNodePools = [pool(types)];
      const search = underutilizedSearch(withBlocks);
      expect(search.command).toBeUndefined();
      expect(search.unconsolidatable).toEqual([
        {
          name: 'n1-claim',
          why: 'no replacement is cheaper than $0.4000/h: the cheaper replacement (small, medium) is marked unavailable after recent launch failures',
        },
      ]);
    });

    it('offers the cheaper type that is still available when only one is blocked', () => {
      const p1 = pod('a', '1');
      const n1 = node('n1', 'large', [p1]);
      const withBlocks = input([n1], [candidate(n1, [p1])], {}, ['on-demand']);
      withBlocks.cluster.nodePools[0] = pool(blocked(['small']));
      const command = underutilizedCommand(withBlocks);
      expect(command).toMatchObject({ decision: 'replace', replacement: { instanceTypeNames: ['medium'] } });
    });

    it('passes over a held command, and decides it again once its instance types change', () => {
      const p1 = pod('a', '1');
      const n1 = node('n1', 'large', [p1]);
      const plain = input([n1], [candidate(n1, [p1])], {}, ['on-demand']);
      const first = underutilizedCommand(plain);
      if (!first) throw new Error('expected a command');
      expect(commandKey(first)).toBe('replace|n1-claim|medium,small');
      const held = underutilizedSearch({ ...plain, heldCommands: new Set([commandKey(first)]) });
      expect(held.command).toBeUndefined();
      const changed = { ...plain, heldCommands: new Set([commandKey(first)]) };
      changed.cluster = { ...plain.cluster, nodePools: [pool(blocked(['small']))] };
      expect(underutilizedCommand(changed)).toMatchObject({ replacement: { instanceTypeNames: ['medium'] } });
    });
  });
});

// upstream pkg/controllers/disruption/consolidation_test.go (#3006, "consolidateAfter now applies to
// destination nodes during consolidation"): its three cases, and the exemptions of scheduler.go.
describe('consolidateAfter protects destination nodes', () => {
  // Two nodes of the same (cheapest) size: the only way to consolidate n2 is to move its pod onto n1.
  const [p1, p2, p3] = [pod('a', '500m'), pod('b', '500m'), pod('c', '500m')];
  const n1 = node('n1', 'small', [p1, p2]);
  const n2 = node('n2', 'small', [p3]);
  const only = (extra: Partial<UnderutilizedInput>) =>
    computeConsolidation([candidate(n2, [p3])], input([n1, n2], [], extra, ['on-demand']));

  it('does not consolidate pods onto a destination still within its consolidateAfter', () => {
    // Its pod would need a new node, and no size is cheaper than the small it is on: nothing to do.
    expect(only({ settlingNodes: new Set(['n1']) })).toEqual({
      none: 'no replacement is cheaper than $0.1000/h',
    });
  });

  it('does once the window has passed (the node is no longer settling)', () => {
    expect(only({ settlingNodes: new Set() })).toMatchObject({ command: { decision: 'delete' } });
  });

  it('still replaces with a cheaper new node: a new node is no destination to protect', () => {
    const big = pod('d', '1');
    const n3 = node('n3', 'large', [big]);
    const outcome = computeConsolidation(
      [candidate(n3, [big])],
      input([n1, n3], [], { settlingNodes: new Set(['n1']) }, ['on-demand']),
    );
    expect(outcome).toMatchObject({ command: { decision: 'replace' } });
  });

  it('lets pending pods land on a settling node: only the pods it refuses are kept off', () => {
    const pending = pod('pending', '500m');
    const result = solve({
      pods: [p3, pending],
      nodePools: [],
      existingNodes: [{ ...node('roomy', 'medium', []), refusedPods: new Set([p3.metadata.uid]) }],
    });
    expect(result.existingPlacements.map((p) => p.pod.name)).toEqual(['pending']);
    expect(result.unschedulable.map((u) => u.pod.name)).toEqual(['c']);
  });

  it('exempts a moved pod that is still Pending, as upstream does (pod.IsPending)', () => {
    const starting: SchedulingPod = { ...p3, status: { phase: 'Pending' } };
    expect(
      computeConsolidation(
        [candidate(n2, [starting])],
        input([n1, n2], [], { settlingNodes: new Set(['n1']) }, ['on-demand']),
      ),
    ).toMatchObject({ command: { decision: 'delete' } });
  });
});
