// NodePool and AKSNodeClass status as Karpenter and the Azure provider write them: counts and capacity
// of a pool's nodes, NodeClassReady from the class, Ready from its dependents; the class's resolved
// images with their requirements, and its conditions.
import { describe, expect, it } from 'vitest';
import {
  desiredNodeClassStatus,
  imageLookups,
} from '../../shared/cloudprovider/azure/decisions/nodeclass-status.js';
import {
  desiredNodePoolStatus,
  poolResources,
  rootReadiness,
} from '../../shared/decisions/nodepool-status.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../shared/models/index.js';
import type { Condition, Node } from '../../shared/models/kube.js';

const now = new Date('2026-11-30T12:00:00Z');
const cond = (
  type: string,
  status: 'True' | 'False' | 'Unknown',
  reason = type,
  message = '',
): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-11-30T11:00:00Z',
});

function claim(name: string, capacity?: Record<string, string>, deleting = false): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': 'general' },
      ...(deleting ? { deletionTimestamp: now.toISOString() } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: { providerID: `azure:///vm/${name}`, ...(capacity ? { capacity } : {}) },
  } as NodeClaim;
}
const node = (capacity: Record<string, string>): Node =>
  ({ metadata: { name: 'n' }, spec: {}, status: { capacity } }) as unknown as Node;

function pool(conditions: Condition[] = [], generation = 3): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', generation },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [],
        },
      },
    },
    status: { conditions },
  } as NodePool;
}
function nodeClass(conditions?: Condition[], extra: Partial<AKSNodeClass['metadata']> = {}): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default', generation: 2, ...extra },
    spec: { imageFamily: 'Ubuntu2204' },
    ...(conditions ? { status: { conditions } } : {}),
  };
}

describe('NodePool status.nodes and status.resources', () => {
  it("sums the capacity of live NodeClaims with a capacity, the Node's once it exists", () => {
    const withNode = claim('a', { cpu: '2', memory: '8Gi', pods: '110' });
    const nodes = new Map([
      [withNode, [node({ cpu: '2', memory: '8151632Ki', pods: '110', 'ephemeral-storage': '100Gi' })]],
    ]);
    const result = poolResources(
      [
        withNode,
        claim('b', { cpu: '500m', memory: '1Gi', pods: '30' }),
        claim('no-capacity-yet'),
        claim('c', { cpu: '8' }, true),
      ],
      (c) => nodes.get(c) ?? [],
    );
    expect(result).toEqual({
      nodes: 2,
      resources: {
        cpu: '2500m',
        'ephemeral-storage': '104857600Ki',
        memory: '9200208Ki',
        nodes: '2',
        pods: '140',
      },
    });
  });

  it('reports zeros (and nodes "0") for an empty pool, as Karpenter\'s base resources', () => {
    expect(poolResources([], () => [])).toEqual({
      nodes: 0,
      resources: { cpu: '0', 'ephemeral-storage': '0Ki', memory: '0Ki', nodes: '0', pods: '0' },
    });
  });
});

describe('NodePool conditions', () => {
  const table: Array<[string, AKSNodeClass | undefined, Condition[], string, string, string]> = [
    [
      'class Ready, validation passed',
      nodeClass([cond('Ready', 'True')]),
      [cond('ValidationSucceeded', 'True')],
      'True',
      'NodeClassReady',
      'True',
    ],
    [
      'class missing',
      undefined,
      [cond('ValidationSucceeded', 'True')],
      'False',
      'NodeClassNotFound',
      'False',
    ],
    [
      'class terminating',
      nodeClass([cond('Ready', 'True')], { deletionTimestamp: now.toISOString() }),
      [cond('ValidationSucceeded', 'True')],
      'False',
      'NodeClassTerminating',
      'False',
    ],
    [
      'class readiness unknown',
      nodeClass(),
      [cond('ValidationSucceeded', 'True')],
      'False',
      'NodeClassReadinessUnknown',
      'False',
    ],
    [
      'class not ready: its reason',
      nodeClass([cond('Ready', 'False', 'UnhealthyDependents', 'ImagesReady=False')]),
      [cond('ValidationSucceeded', 'True')],
      'False',
      'UnhealthyDependents',
      'False',
    ],
    [
      'budgets invalid',
      nodeClass([cond('Ready', 'True')]),
      [cond('ValidationSucceeded', 'False', 'InvalidDisruptionBudget')],
      'True',
      'NodeClassReady',
      'False',
    ],
    [
      'validation not written yet',
      nodeClass([cond('Ready', 'True')]),
      [],
      'True',
      'NodeClassReady',
      'Unknown',
    ],
  ];
  it.each(table)('%s', (_name, cls, existing, nodeClassReady, reason, ready) => {
    const status = desiredNodePoolStatus({
      nodePool: pool(existing),
      nodeClaims: [],
      nodesOf: () => [],
      nodeClass: cls,
      now,
    });
    const byType = new Map(status.conditions.map((c) => [c.type, c]));
    expect(byType.get('NodeClassReady')).toMatchObject({
      status: nodeClassReady,
      reason,
      observedGeneration: 3,
    });
    expect(byType.get('Ready')?.status).toBe(ready);
    // ValidationSucceeded is the budget validation's; this step never writes it.
    expect(byType.get('ValidationSucceeded')).toEqual(existing.find((c) => c.type === 'ValidationSucceeded'));
  });

  it('returns the same conditions when nothing changed (so the sweep writes nothing)', () => {
    const first = desiredNodePoolStatus({
      nodePool: pool([cond('ValidationSucceeded', 'True')]),
      nodeClaims: [],
      nodesOf: () => [],
      nodeClass: nodeClass([cond('Ready', 'True')]),
      now,
    });
    const again = desiredNodePoolStatus({
      nodePool: { ...pool(), status: { conditions: first.conditions } },
      nodeClaims: [],
      nodesOf: () => [],
      nodeClass: nodeClass([cond('Ready', 'True')]),
      now: new Date(now.getTime() + 60_000),
    });
    expect(again.conditions).toEqual(first.conditions);
  });

  it('root readiness lists the unhealthy dependents', () => {
    expect(rootReadiness([cond('A', 'True'), cond('B', 'False')], ['A', 'B', 'C'])).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'UnhealthyDependents',
      message: 'B=False, C=Unknown',
    });
  });
});

describe('AKSNodeClass status', () => {
  it('lists the resolved images with arch and Hyper-V generation requirements, preferred first, and is Ready', () => {
    const cls = nodeClass();
    const lookups = imageLookups(cls, '1.33.2');
    if ('problem' in lookups) throw new Error(lookups.problem);
    expect(lookups.map((l) => `${l.arch}/${l.generation}/${l.definition}`)).toEqual([
      'amd64/V2/2204gen2containerd',
      'amd64/V1/2204containerd',
      'arm64/V2/2204gen2arm64containerd',
    ]);
    const status = desiredNodeClassStatus({
      nodeClass: cls,
      kubernetesVersion: 'v1.33.2',
      resolved: lookups.map((lookup, i) => ({
        lookup,
        imageId: i === 1 ? undefined : `/CommunityGalleries/g/images/${lookup.definition}/versions/1`,
      })),
      now,
    });
    expect(status.kubernetesVersion).toBe('1.33.2');
    expect(status.images).toEqual([
      {
        id: '/CommunityGalleries/g/images/2204gen2containerd/versions/1',
        requirements: [
          { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
          { key: 'karpenter.azure.com/sku-hyperv-generation', operator: 'In', values: ['2'] },
        ],
      },
      {
        id: '/CommunityGalleries/g/images/2204gen2arm64containerd/versions/1',
        requirements: [
          { key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] },
          { key: 'karpenter.azure.com/sku-hyperv-generation', operator: 'In', values: ['2'] },
        ],
      },
    ]);
    const byType = new Map(status.conditions.map((c) => [c.type, c]));
    expect(byType.get('ImagesReady')?.status).toBe('True');
    expect(byType.get('KubernetesVersionReady')?.status).toBe('True');
    expect(byType.get('ValidationSucceeded')?.status).toBe('True');
    expect(byType.get('Ready')).toMatchObject({ status: 'True', reason: 'Ready', observedGeneration: 2 });
  });

  it('is not Ready when no image resolves or the family is unknown, naming why', () => {
    const unknownFamily = { ...nodeClass(), spec: { imageFamily: 'Windows' } } as unknown as AKSNodeClass;
    const lookups = imageLookups(unknownFamily, '1.33.2');
    expect(lookups).toEqual({ problem: expect.stringContaining('imageFamily "Windows"') });
    const status = desiredNodeClassStatus({
      nodeClass: unknownFamily,
      kubernetesVersion: '1.33.2',
      resolved: lookups as { problem: string },
      now,
    });
    const byType = new Map(status.conditions.map((c) => [c.type, c]));
    expect(byType.get('ImagesReady')).toMatchObject({ status: 'False', reason: 'ImagesNotFound' });
    expect(byType.get('ValidationSucceeded')).toMatchObject({
      status: 'False',
      reason: 'InvalidFieldValue',
      message: expect.stringContaining('spec.imageFamily: "Windows" is not one of'),
    });
    expect(byType.get('Ready')).toMatchObject({
      status: 'False',
      message: expect.stringMatching(/^ImagesReady=False, ValidationSucceeded=False: spec\.imageFamily: /),
    });
  });
});
