import { describe, expect, it } from 'vitest';
import { solve, type SchedulingPod } from '../../../shared/decisions/scheduling/index.js';
import { CATALOG, instanceType, LARGE, nodePool, pod, pods, SMALL } from './fixtures.js';

describe('solve: resources and NodePools', () => {
  it('packs pods onto one NodeClaim whose instance types fit them all, cheapest first', () => {
    const result = solve({ pods: pods(3, { cpu: '1', memory: '1Gi' }), nodePools: [nodePool('default')] });
    expect(result.unschedulable).toEqual([]);
    expect(result.newNodeClaims).toHaveLength(1);
    const [claim] = result.newNodeClaims;
    expect(claim?.nodePoolName).toBe('default');
    expect(claim?.pods).toHaveLength(3);
    // 3 cpu fit medium (4) and large (8), not small (2).
    expect(claim?.instanceTypeNames).toEqual(['medium', 'large']);
    expect(claim?.requirements).toContainEqual({
      key: 'node.kubernetes.io/instance-type',
      operator: 'In',
      values: ['medium', 'large'],
    });
    expect(claim?.requirements).toContainEqual({
      key: 'karpenter.sh/capacity-type',
      operator: 'In',
      values: ['on-demand'],
    });
    expect(claim?.requests).toMatchObject({ cpu: '3', memory: '3072Mi', pods: '3' });
    expect(claim?.labels['karpenter.sh/nodepool']).toBe('default');
    expect(claim?.cheapestPrice).toBe(0.2);
  });

  it('opens a second NodeClaim once the largest instance type is full', () => {
    const result = solve({ pods: pods(10, { cpu: '3' }), nodePools: [nodePool('default')] });
    expect(result.unschedulable).toEqual([]);
    expect(result.newNodeClaims.map((c) => c.pods.length).sort()).toEqual([2, 2, 2, 2, 2]);
  });

  it('uses the heaviest NodePool first, a lighter one only when the heavier cannot fit', () => {
    const nodePools = [
      nodePool('light', { weight: 1 }),
      nodePool('heavy', { weight: 50, instanceTypes: [SMALL] }),
    ];
    const small = solve({ pods: [pod({ cpu: '1' })], nodePools });
    expect(small.newNodeClaims.map((c) => c.nodePoolName)).toEqual(['heavy']);
    const big = solve({ pods: [pod({ cpu: '6' })], nodePools });
    expect(big.newNodeClaims.map((c) => c.nodePoolName)).toEqual(['light']);
    // A NodeClaim already opened in this solve is tried before any new one (Karpenter's order).
    const both = solve({ pods: [pod({ cpu: '1' }), pod({ cpu: '6' })], nodePools });
    expect(both.newNodeClaims.map((c) => [c.nodePoolName, c.pods.length])).toEqual([['light', 2]]);
  });

  it('orders equal weights by name descending', () => {
    const result = solve({ pods: [pod({ cpu: '1' })], nodePools: [nodePool('a'), nodePool('b')] });
    expect(result.newNodeClaims.map((c) => c.nodePoolName)).toEqual(['b']);
  });

  it('places pods on an existing node with room before opening NodeClaims', () => {
    const result = solve({
      pods: pods(2, { cpu: '1' }),
      nodePools: [nodePool('default')],
      existingNodes: [
        {
          name: 'node-a',
          kind: 'Node',
          labels: { 'kubernetes.io/hostname': 'node-a' },
          allocatable: { cpu: '2', memory: '8Gi', pods: '110' },
          pods: [{ namespace: 'default', requests: { cpu: '500m' } }],
        },
      ],
    });
    expect(result.existingPlacements.map((p) => p.nodeName)).toEqual(['node-a']);
    expect(result.newNodeClaims).toHaveLength(1);
  });

  it('honours nodeSelector on NodePool labels and reports the NodePool that does not define it', () => {
    const result = solve({
      pods: [
        pod({ cpu: '1' }, { nodeSelector: { team: 'a' } }),
        pod({ cpu: '1' }, { nodeSelector: { team: 'b' } }),
      ],
      nodePools: [nodePool('team-a', { labels: { team: 'a' } })],
    });
    expect(result.newNodeClaims).toHaveLength(1);
    expect(result.newNodeClaims[0]?.labels['team']).toBe('a');
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]?.reason).toContain('nodepool "team-a"');
    expect(result.unschedulable[0]?.reason).toContain('team');
  });

  it('reports a pod too large for every instance type and schedules the rest', () => {
    const result = solve({
      pods: [pod({ cpu: '1000' }), pod({ cpu: '1' })],
      nodePools: [nodePool('default')],
    });
    expect(result.newNodeClaims).toHaveLength(1);
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]?.reason).toMatch(
      /nodepool "default".*cpu request 1000 exceeds the largest allocatable 8/,
    );
  });

  it('reports a malformed quantity as an unschedulable pod, never an exception', () => {
    const result = solve({
      pods: [pod({ cpu: 'lots' }), pod({ cpu: '1' })],
      nodePools: [nodePool('default')],
    });
    expect(result.newNodeClaims).toHaveLength(1);
    expect(result.unschedulable[0]?.reason).toMatch(/cpu.*"lots"/);
  });

  it('fails a pod whose spec is not shaped like a pod, and schedules the rest', () => {
    const broken = {
      metadata: { name: 'broken', namespace: 'default', uid: 'uid-broken' },
      spec: { containers: 7 },
    };
    const result = solve({
      pods: [broken as unknown as SchedulingPod, pod({ cpu: '1' })],
      nodePools: [nodePool('default')],
    });
    expect(result.newNodeClaims).toHaveLength(1);
    expect(result.unschedulable).toEqual([
      {
        pod: { namespace: 'default', name: 'broken', uid: 'uid-broken' },
        reason: expect.stringMatching(/invalid pod|unreadable/),
        causes: [{ nodePool: '', cause: 'InvalidPod', message: expect.stringMatching(/unreadable/) }],
      },
    ]);
  });

  it('caps the instance-type list and keeps it cheapest first', () => {
    const many = Array.from({ length: 20 }, (_, i) => instanceType(`it-${i}`, 4, 16, 1 - i * 0.01));
    const result = solve({
      pods: [pod({ cpu: '1' })],
      nodePools: [nodePool('default', { instanceTypes: many })],
      options: { maxInstanceTypes: 5 },
    });
    expect(result.newNodeClaims[0]?.instanceTypeNames).toEqual(['it-19', 'it-18', 'it-17', 'it-16', 'it-15']);
  });

  it('subtracts the largest option from NodePool limits and stops at them', () => {
    const result = solve({
      pods: pods(3, { cpu: '1' }, { nodeSelector: {} }),
      nodePools: [nodePool('default', { limits: { cpu: '8' }, instanceTypes: [LARGE] })],
      options: {},
    });
    // The first NodeClaim reserves 8 cpu (its largest option); every pod fits on it.
    expect(result.newNodeClaims).toHaveLength(1);
    const full = solve({
      pods: [pod({ cpu: '1' })],
      nodePools: [
        nodePool('default', { limits: { cpu: '10' }, usage: { cpu: '8' }, instanceTypes: CATALOG }),
      ],
    });
    expect(full.newNodeClaims[0]?.instanceTypeNames).toEqual(['small']);
    const exhausted = solve({
      pods: [pod({ cpu: '1' })],
      nodePools: [nodePool('default', { limits: { cpu: '10' }, usage: { cpu: '10' } })],
    });
    expect(exhausted.unschedulable[0]?.reason).toMatch(/exceed the NodePool's limits \(cpu 0 left\)/);
  });
});
