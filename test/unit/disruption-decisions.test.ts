// Table-driven tests for the pure decisions behind drift replacement, static NodePools, drain and orphan
// VM collection.
import { describe, expect, test } from 'vitest';
import {
  failedAttemptAnnotations,
  isDisrupting,
  replacementBackoffOf,
} from '../../shared/decisions/disruption-state.js';
import { podDrainAction, type DrainPod } from '../../shared/decisions/drain.js';
import { labelsMatch, LabelSelectorError } from '../../shared/decisions/label-selector.js';
import {
  deterministicNodeClaimName,
  nodeClaimFromTemplate,
} from '../../shared/decisions/nodeclaim-template.js';
import { orphanVmCandidates } from '../../shared/cloudprovider/azure/decisions/orphan-vms.js';
import { planStaticReplicas, staticReplicaNames } from '../../shared/decisions/static-replicas.js';
import type { AKSNodeClass } from '../../shared/models/aks-node-class.js';
import type { NodeClaim, NodePool } from '../../shared/models/karpenter.js';
import type { Node } from '../../shared/models/kube.js';

const now = new Date('2026-03-01T12:00:00Z');

function pool(spec: Partial<NodePool['spec']> = {}): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', uid: 'pool-uid' },
    spec: {
      template: {
        metadata: { labels: { team: 'a' }, annotations: { note: 'x' } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
          taints: [{ key: 'dedicated', value: 'x', effect: 'NoSchedule' }],
          terminationGracePeriod: '1h',
        },
      },
      ...spec,
    },
  };
}

function claim(
  name: string,
  options: {
    created?: string;
    initialized?: boolean;
    deleting?: boolean;
    marked?: boolean;
    replacementOf?: string;
  } = {},
): NodeClaim {
  const conditions = [
    ...(options.initialized === false
      ? []
      : [{ type: 'Initialized', status: 'True' as const, reason: 'x', message: '', lastTransitionTime: '' }]),
    ...(options.marked
      ? [
          {
            type: 'DisruptionReason',
            status: 'True' as const,
            reason: 'Drifted',
            message: '',
            lastTransitionTime: '',
          },
        ]
      : []),
  ];
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      creationTimestamp: options.created ?? '2026-03-01T10:00:00Z',
      ...(options.deleting ? { deletionTimestamp: '2026-03-01T11:00:00Z' } : {}),
      ...(options.replacementOf
        ? { annotations: { 'karpenter.azure.com/replacement-of': options.replacementOf } }
        : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: { conditions },
  };
}

describe('label selectors', () => {
  test.each([
    ['a=b', { a: 'b' }, true],
    ['a==b', { a: 'c' }, false],
    ['a!=b', {}, true],
    ['a in (x, y),b', { a: 'y', b: '' }, true],
    ['a notin (x)', { a: 'x' }, false],
    ['!a', { a: '1' }, false],
    ['karpenter.sh/nodepool in (p1,p2)', { 'karpenter.sh/nodepool': 'p2' }, true],
    ['karpenter.sh/nodepool in (p1,p2)', { 'karpenter.sh/nodepool': 'p3' }, false],
  ])('%s on %j → %s', (selector, labels, expected) => {
    expect(labelsMatch(selector, labels)).toBe(expected);
  });

  test('an unparsable term is an error', () => {
    expect(() => labelsMatch('a in x', {})).toThrow(LabelSelectorError);
  });
});

describe('static replicas', () => {
  test('creates the missing replicas, capped by limits.nodes over every live NodeClaim', () => {
    expect(planStaticReplicas(pool({ replicas: 3 }), [claim('a')])).toMatchObject({ create: 2, remove: [] });
    expect(planStaticReplicas(pool({ replicas: 3, limits: { nodes: '2' } }), [claim('a')])).toMatchObject({
      create: 1,
    });
    expect(
      planStaticReplicas(pool({ replicas: 3, limits: { nodes: '2' } }), [claim('a'), claim('b')]),
    ).toMatchObject({ create: 0 });
  });

  test('a deleting NodeClaim is replaced; a replacement in flight is neither counted nor an extra', () => {
    expect(
      planStaticReplicas(pool({ replicas: 2 }), [claim('a'), claim('b', { deleting: true })]).create,
    ).toBe(1);
    const inFlight = [claim('a', { marked: true }), claim('b'), claim('r', { replacementOf: 'a' })];
    expect(planStaticReplicas(pool({ replicas: 2 }), inFlight)).toEqual({
      create: 0,
      remove: [],
      counted: 2,
    });
    // Once the old NodeClaim is being deleted, its replacement counts in its place.
    const handedOver = [claim('a', { deleting: true }), claim('b'), claim('r', { replacementOf: 'a' })];
    expect(planStaticReplicas(pool({ replicas: 2 }), handedOver)).toEqual({
      create: 0,
      remove: [],
      counted: 2,
    });
  });

  test('removes not-initialized NodeClaims first, then the newest, never a marked one', () => {
    const claims = [
      claim('old', { created: '2026-03-01T01:00:00Z' }),
      claim('new', { created: '2026-03-01T09:00:00Z' }),
      claim('fresh', { created: '2026-03-01T02:00:00Z', initialized: false }),
      claim('marked', { created: '2026-03-01T11:00:00Z', marked: true }),
    ];
    expect(planStaticReplicas(pool({ replicas: 2 }), claims).remove).toEqual(['fresh', 'new']);
  });

  test('names are deterministic and skip taken ones', () => {
    const nameFor = (slot: number) => deterministicNodeClaimName('general', `static/uid/${slot}`);
    const first = staticReplicaNames(2, new Set(), nameFor);
    expect(staticReplicaNames(2, new Set(), nameFor)).toEqual(first);
    expect(staticReplicaNames(1, new Set([first[0] ?? '']), nameFor)).toEqual([first[1]]);
    expect(first[0]).toMatch(/^general-[0-9a-f]{8}$/);
  });
});

describe('NodeClaim from a template', () => {
  test('labels with the NodePool, hash annotations, owner reference, the template spec', () => {
    const nodeClass: AKSNodeClass = {
      apiVersion: 'karpenter.azure.com/v1beta1',
      kind: 'AKSNodeClass',
      metadata: { name: 'default' },
      spec: { imageFamily: 'AzureLinux' },
    };
    const made = nodeClaimFromTemplate({ nodePool: pool(), nodeClass, name: 'general-1' });
    expect(made.metadata.labels).toEqual({ team: 'a', 'karpenter.sh/nodepool': 'general' });
    expect(made.metadata.annotations).toMatchObject({
      note: 'x',
      'karpenter.sh/nodepool-hash-version': 'v1',
    });
    expect(made.metadata.annotations?.['karpenter.azure.com/aksnodeclass-hash']).toMatch(/^[0-9a-f]{16}$/);
    expect(made.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodePool',
        name: 'general',
        uid: 'pool-uid',
        blockOwnerDeletion: true,
      },
    ]);
    expect(made.spec).toMatchObject({ terminationGracePeriod: '1h', taints: [{ key: 'dedicated' }] });
  });
});

describe('disrupting', () => {
  const node = (taints: Node['spec']['taints'], ready = 'True'): Node => ({
    metadata: { name: 'n' },
    spec: { taints },
    status: { conditions: [{ type: 'Ready', status: ready as 'True' }] },
  });
  test.each([
    ['healthy', claim('a'), [node([])], false],
    ['marked', claim('a', { marked: true }), [node([])], true],
    ['deleting', claim('a', { deleting: true }), [], true],
    ['tainted', claim('a'), [node([{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }])], true],
    ['NotReady', claim('a'), [node([], 'False')], true],
  ] as const)('%s', (_name, nodeClaim, nodes, expected) => {
    expect(isDisrupting(nodeClaim, nodes)).toBe(expected);
  });

  test('each failed attempt doubles the hold, up to 8×', () => {
    let nodeClaim = claim('a');
    const holds: number[] = [];
    for (let i = 0; i < 5; i++) {
      const annotations = failedAttemptAnnotations(nodeClaim, now, 60_000);
      nodeClaim = { ...nodeClaim, metadata: { ...nodeClaim.metadata, annotations } };
      const backoff = replacementBackoffOf(nodeClaim);
      holds.push((Date.parse(backoff.backoffUntil ?? '') - now.getTime()) / 60_000);
    }
    expect(holds).toEqual([1, 2, 4, 8, 8]);
    expect(replacementBackoffOf(nodeClaim).attempts).toBe(5);
  });
});

describe('drain', () => {
  const pod = (overrides: Partial<DrainPod> = {}): DrainPod => ({
    namespace: 'default',
    name: 'p',
    phase: 'Running',
    ownerKinds: ['ReplicaSet'],
    annotations: {},
    tolerations: [],
    ...overrides,
  });
  const deadline = new Date('2026-03-01T13:00:00Z');
  test.each([
    ['an ordinary pod is evicted', pod(), 'evict'],
    ['a DaemonSet pod stays', pod({ ownerKinds: ['DaemonSet'] }), 'leave'],
    ['a mirror pod stays', pod({ annotations: { 'kubernetes.io/config.mirror': 'x' } }), 'leave'],
    ['a finished pod stays', pod({ phase: 'Succeeded' }), 'leave'],
    ['a pod tolerating everything stays', pod({ tolerations: [{ operator: 'Exists' }] }), 'leave'],
    [
      'a pod tolerating the disrupted taint stays',
      pod({ tolerations: [{ key: 'karpenter.sh/disrupted', operator: 'Exists' }] }),
      'leave',
    ],
    ['a terminating pod is waited for', pod({ deletionTimestamp: '2026-03-01T12:00:30Z' }), 'wait'],
    [
      'a pod stuck terminating no longer holds the node',
      pod({ deletionTimestamp: '2026-03-01T11:59:00Z' }),
      'leave',
    ],
    // upstream terminator/eviction.go: an active pod that is not evictable (do-not-disrupt) stays queued.
    [
      'a do-not-disrupt "true" pod is waited for, not evicted',
      pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
      'wait',
    ],
    [
      'a do-not-disrupt duration still running is waited for',
      pod({ annotations: { 'karpenter.sh/do-not-disrupt': '2h' }, startTime: '2026-03-01T11:00:00Z' }),
      'wait',
    ],
    [
      'a do-not-disrupt duration that has elapsed: evicted',
      pod({ annotations: { 'karpenter.sh/do-not-disrupt': '30m' }, startTime: '2026-03-01T11:00:00Z' }),
      'evict',
    ],
    [
      'an invalid do-not-disrupt is ignored: evicted',
      pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'yes' } }),
      'evict',
    ],
  ] as const)('%s', (_name, p, expected) => {
    expect(podDrainAction(p, now, deadline)).toBe(expected);
  });

  test('terminationGracePeriod overrides do-not-disrupt: past it the pod is deleted', () => {
    const protectedPod = pod({ annotations: { 'karpenter.sh/do-not-disrupt': 'true' } });
    expect(podDrainAction(protectedPod, new Date('2026-03-01T13:00:00Z'), deadline)).toBe('delete');
  });

  test('after terminationGracePeriod the remaining pods are deleted', () => {
    expect(podDrainAction(pod(), new Date('2026-03-01T13:00:00Z'), deadline)).toBe('delete');
    expect(podDrainAction(pod(), new Date('2026-03-01T13:00:00Z'), undefined)).toBe('evict');
  });
});

describe('orphan VMs', () => {
  const tags = (nodeClaim: string, cluster = 'c1') => ({
    'karpenter.azure.com_cluster': cluster,
    'karpenter.sh_nodeclaim': nodeClaim,
  });
  test('only this cluster, only without a NodeClaim, only past the grace period, not already deleting', () => {
    const candidates = orphanVmCandidates({
      vms: [
        { name: 'vm-orphan', tags: tags('gone'), timeCreated: '2026-03-01T11:00:00Z' },
        { name: 'vm-young', tags: tags('gone2'), timeCreated: '2026-03-01T11:59:00Z' },
        { name: 'vm-live', tags: tags('live'), timeCreated: '2026-03-01T11:00:00Z' },
        { name: 'vm-other-cluster', tags: tags('gone', 'c2'), timeCreated: '2026-03-01T11:00:00Z' },
        { name: 'vm-untagged', timeCreated: '2026-03-01T11:00:00Z' },
        {
          name: 'vm-deleting',
          tags: tags('gone3'),
          timeCreated: '2026-03-01T11:00:00Z',
          provisioningState: 'Deleting',
        },
        { name: 'vm-ageless', tags: tags('gone4') },
      ],
      clusterName: 'c1',
      knownNodeClaims: new Set(['live']),
      now,
      graceMs: 10 * 60_000,
    });
    expect(candidates).toEqual([{ vmName: 'vm-orphan', nodeClaim: 'gone' }]);
  });
});
