// A NodePool's status as the rollout RFC shapes it (shared/decisions/nodepool-status.ts): observedGeneration,
// nodes, upToDateNodes and readyNodes over the same nodes, and the RolledOut condition in each phase of a
// rollout (rollout-condition.ts), with the figures and what to do in its message.
import { describe, expect, it } from 'vitest';
import { desiredNodePoolStatus } from '../../shared/decisions/nodepool-status.js';
import { rolledOutCondition, type RolledOutInput } from '../../shared/decisions/rollout-condition.js';
import {
  RolloutAnnotations,
  rolloutTargetOf,
  serializeRolloutState,
  type RolloutState,
} from '../../shared/decisions/rollout.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../shared/models/karpenter.js';
import type { Node } from '../../shared/models/kube.js';

const NOW = new Date('2026-11-30T12:00:00Z');

function pool(annotations: Record<string, string> = {}): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', generation: 7, annotations },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [],
        },
      },
    },
  };
}
const target = rolloutTargetOf(pool(), undefined);

function claim(name: string, options: { drifted?: boolean; deleting?: boolean; capacity?: boolean } = {}) {
  const nodeClaim: NodeClaim = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': 'general' },
      ...(options.deleting ? { deletionTimestamp: NOW.toISOString() } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      providerID: `azure:///vm/${name}`,
      ...(options.capacity === false ? {} : { capacity: { cpu: '2', memory: '8Gi', pods: '110' } }),
      conditions: options.drifted
        ? [
            {
              type: ConditionTypes.drifted,
              status: 'True',
              reason: 'NodePoolDrifted',
              message: '',
              lastTransitionTime: NOW.toISOString(),
            },
          ]
        : [],
    },
  };
  return nodeClaim;
}

const node = (name: string, ready: 'True' | 'False' | 'Unknown'): Node => ({
  metadata: { name: `aks-${name}` },
  spec: { providerID: `azure:///vm/${name}` },
  status: {
    capacity: { cpu: '2', memory: '8Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: ready }],
  },
});

const state = (overrides: Partial<RolloutState>): RolloutState => ({
  target: target.id,
  spec: target.spec,
  phase: 'waves',
  wave: 2,
  floor: 2,
  startedAt: NOW.toISOString(),
  gatesFrom: NOW.toISOString(),
  waveStartedAt: NOW.toISOString(),
  ...overrides,
});
const withState = (s: RolloutState, more: Record<string, string> = {}) =>
  pool({ [RolloutAnnotations.state]: serializeRolloutState(s), ...more });

describe('NodePool status counts', () => {
  it('observedGeneration, nodes, upToDateNodes and readyNodes over the nodes status.nodes counts', () => {
    const claims = [
      claim('a'),
      claim('b', { drifted: true }),
      claim('c', { drifted: true }),
      claim('d', { deleting: true }),
      claim('e', { capacity: false }),
    ];
    const nodes = [node('a', 'True'), node('b', 'True'), node('c', 'Unknown'), node('d', 'True')];
    const status = desiredNodePoolStatus({
      nodePool: pool(),
      nodeClaims: claims,
      nodesOf: (c) => nodes.filter((n) => n.spec.providerID === c.status?.providerID),
      nodeClass: undefined,
      now: NOW,
    });
    expect(status).toMatchObject({ observedGeneration: 7, nodes: 3, upToDateNodes: 1, readyNodes: 2 });
    expect(status.conditions.find((c) => c.type === 'RolledOut')).toMatchObject({
      status: 'False',
      reason: 'RollingOut',
      observedGeneration: 7,
    });
  });
});

describe('RolledOut', () => {
  const input = (nodePool: NodePool, drifted: number, overrides: Partial<RolledOutInput> = {}) =>
    rolledOutCondition({
      nodePool,
      target,
      defaultPolicy: 'Canary',
      nodes: 6,
      upToDateNodes: 6 - drifted,
      drifted,
      ...overrides,
    });

  it.each<[string, NodePool, number, string, string, string]>([
    ['every node up to date', pool(), 0, 'True', 'RolledOut', ''],
    [
      'every node up to date after a rollout',
      withState(state({ phase: 'rolledOut' })),
      0,
      'True',
      'RolledOut',
      '',
    ],
    [
      'drifted, rollout not started yet',
      pool(),
      6,
      'False',
      'RollingOut',
      'Starting the rollout; 0 of 6 nodes up to date',
    ],
    [
      'the canary',
      withState(state({ phase: 'canary', wave: 1, floor: 5 })),
      6,
      'False',
      'RollingOut',
      'wave 1 (canary), 0 of 6 nodes up to date',
    ],
    [
      'a wave, soaking',
      withState(state({ soakingSince: NOW.toISOString() })),
      3,
      'False',
      'RollingOut',
      'wave 2, soaking, 3 of 6 nodes up to date',
    ],
    [
      'paused',
      withState(state({}), { [RolloutAnnotations.paused]: 'true' }),
      3,
      'False',
      'RolloutPaused',
      'Paused by karpenter.azure.com/rollout-paused at wave 2; 3 of 6 nodes up to date',
    ],
    [
      'Immediate',
      pool({ [RolloutAnnotations.policy]: 'Immediate' }),
      3,
      'False',
      'RollingOut',
      'Replacing at the Drifted budget; 3 of 6 nodes up to date',
    ],
    [
      'halted',
      withState(state({ phase: 'halted', gate: { name: 'PodNotReady', message: 'pod a/b is not Ready' } })),
      3,
      'False',
      'RolloutHalted',
      `Rollout ${target.id} halted at wave 2: pod a/b is not Ready. Revert the change to roll back, or annotate karpenter.azure.com/rollout-resume="${target.id}" to go on; 3 of 6 nodes up to date`,
    ],
    [
      'rolling back',
      withState(
        state({
          phase: 'rollback',
          rejectedImageVersion: '202612.01.0',
          gate: { name: 'X', message: 'Node n NotReady' },
        }),
      ),
      1,
      'False',
      'RollbackInProgress',
      'Rolling back node image version 202612.01.0 (Node n NotReady); 5 of 6 nodes up to date',
    ],
    [
      'rolled back, until the target changes',
      withState(
        state({
          phase: 'rolledBack',
          rejectedImageVersion: '202612.01.0',
          gate: { name: 'X', message: 'Node n NotReady' },
        }),
      ),
      0,
      'False',
      'RolledBack',
      'Node image version 202612.01.0 was rolled back: Node n NotReady',
    ],
    [
      'Immediate now, after a halted Canary rollout',
      withState(state({ phase: 'halted' }), { [RolloutAnnotations.policy]: 'Immediate' }),
      3,
      'False',
      'RollingOut',
      'Replacing at the Drifted budget; 3 of 6 nodes up to date',
    ],
    [
      'paused during a rollback',
      withState(state({ phase: 'rollback', rejectedImageVersion: 'v' }), {
        [RolloutAnnotations.paused]: 'true',
      }),
      1,
      'False',
      'RolloutPaused',
      'Paused by karpenter.azure.com/rollout-paused during a rollback; 5 of 6 nodes up to date',
    ],
    [
      'a policy annotation naming no policy',
      pool({ [RolloutAnnotations.policy]: 'Fast' }),
      0,
      'True',
      'RolledOut',
      '(annotation karpenter.azure.com/rollout-policy "Fast" names no policy: Canary or Immediate; the setting applies)',
    ],
  ])('%s', (_, nodePool, drifted, status, reason, message) => {
    expect(input(nodePool, drifted)).toEqual({ type: 'RolledOut', status, reason, message });
  });

  it('a rolled-back state of an older target says nothing once the target changed', () => {
    const older = withState(state({ phase: 'rolledBack', target: 'older', spec: 'older' }));
    expect(input(older, 0)).toMatchObject({ status: 'True', reason: 'RolledOut' });
  });
});
