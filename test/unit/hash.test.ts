import { describe, expect, it } from 'vitest';
import {
  NODECLASS_HASH_VERSION,
  NODEPOOL_HASH_VERSION,
  hashAnnotations,
  nodeClassHash,
  nodePoolTemplateHash,
} from '../../shared/decisions/hash.js';
import { WellKnown, type AKSNodeClass, type NodePool } from '../../shared/models/index.js';

function nodePool(): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', generation: 3 },
    spec: {
      template: {
        metadata: { labels: { team: 'a', tier: 'web' }, annotations: { 'example.com/owner': 'ops' } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [{ key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] }],
          taints: [
            { key: 'dedicated', value: 'web', effect: 'NoSchedule' },
            { key: 'gpu', effect: 'NoExecute' },
          ],
          startupTaints: [{ key: 'example.com/agent-not-ready', effect: 'NoSchedule' }],
          expireAfter: '720h',
          terminationGracePeriod: '1h',
        },
      },
      disruption: { budgets: [{ nodes: '10%' }], consolidationPolicy: 'WhenEmpty' },
      limits: { cpu: '100' },
      weight: 10,
    },
  };
}

function nodeClass(): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default' },
    spec: {
      imageFamily: 'Ubuntu2204',
      osDiskSizeGB: 128,
      vnetSubnetID:
        '/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v/subnets/nodes',
      kubelet: { cpuManagerPolicy: 'none', allowedUnsafeSysctls: ['net.core.somaxconn', 'kernel.msg*'] },
      maxPods: 30,
      tags: { env: 'prod' },
    },
  };
}

type Edit<T> = (o: T) => void;

describe('nodePoolTemplateHash', () => {
  const base = nodePoolTemplateHash(nodePool());

  it('is a short hex digest that does not change between calls', () => {
    expect(base).toMatch(/^[0-9a-f]{16}$/);
    expect(nodePoolTemplateHash(nodePool())).toBe(base);
  });

  it.each<[string, Edit<NodePool>]>([
    ['label value', (p) => (p.spec.template.metadata!.labels!.team = 'b')],
    ['label added', (p) => (p.spec.template.metadata!.labels!.extra = 'x')],
    ['annotation', (p) => (p.spec.template.metadata!.annotations = {})],
    ['taint effect', (p) => (p.spec.template.spec.taints![1]!.effect = 'NoSchedule')],
    ['taint value', (p) => (p.spec.template.spec.taints![0]!.value = 'api')],
    ['taint removed', (p) => p.spec.template.spec.taints!.pop()],
    ['startup taint', (p) => (p.spec.template.spec.startupTaints = [])],
    ['nodeClassRef name', (p) => (p.spec.template.spec.nodeClassRef.name = 'other')],
    ['nodeClassRef kind', (p) => (p.spec.template.spec.nodeClassRef.kind = 'OtherNodeClass')],
    ['expireAfter', (p) => (p.spec.template.spec.expireAfter = 'Never')],
    ['terminationGracePeriod', (p) => delete p.spec.template.spec.terminationGracePeriod],
    // Moving a taint between the two lists changes what the node does, so it must count.
    [
      'taint moved to startupTaints',
      (p) => {
        const taint = p.spec.template.spec.taints!.pop()!;
        p.spec.template.spec.startupTaints!.push(taint);
      },
    ],
  ])('changes when the %s changes', (_field, edit) => {
    const p = nodePool();
    edit(p);
    expect(nodePoolTemplateHash(p)).not.toBe(base);
  });

  it.each<[string, Edit<NodePool>]>([
    [
      'requirements',
      (p) =>
        p.spec.template.spec.requirements.push({ key: 'topology.kubernetes.io/zone', operator: 'Exists' }),
    ],
    ['budgets', (p) => (p.spec.disruption!.budgets = [{ nodes: '0' }])],
    ['disruption policy', (p) => (p.spec.disruption!.consolidationPolicy = 'WhenEmptyOrUnderutilized')],
    ['limits', (p) => (p.spec.limits = { cpu: '1000' })],
    ['weight', (p) => (p.spec.weight = 50)],
    ['replicas', (p) => (p.spec.replicas = 10)],
    ['NodePool metadata', (p) => (p.metadata = { name: 'general', generation: 9, labels: { x: 'y' } })],
    ['label key order', (p) => (p.spec.template.metadata!.labels = { tier: 'web', team: 'a' })],
    ['taint order', (p) => p.spec.template.spec.taints!.reverse()],
    ['taint timeAdded', (p) => (p.spec.template.spec.taints![0]!.timeAdded = '2025-01-01T00:00:00Z')],
    ['taint value "" vs absent', (p) => (p.spec.template.spec.taints![1]!.value = '')],
    [
      'nodeClassRef key order',
      (p) =>
        (p.spec.template.spec.nodeClassRef = {
          name: 'default',
          kind: 'AKSNodeClass',
          group: 'karpenter.azure.com',
        }),
    ],
  ])('ignores %s', (_field, edit) => {
    const p = nodePool();
    edit(p);
    expect(nodePoolTemplateHash(p)).toBe(base);
  });

  it('treats empty maps and lists as absent', () => {
    const empty = nodePool();
    empty.spec.template.metadata = { labels: {}, annotations: {} };
    empty.spec.template.spec.taints = [];
    empty.spec.template.spec.startupTaints = [];
    const absent = nodePool();
    delete absent.spec.template.metadata;
    delete absent.spec.template.spec.taints;
    delete absent.spec.template.spec.startupTaints;
    expect(nodePoolTemplateHash(empty)).toBe(nodePoolTemplateHash(absent));
  });

  it('does not confuse a label with an annotation of the same key and value', () => {
    const asLabel = nodePool();
    asLabel.spec.template.metadata = { labels: { k: 'v' } };
    const asAnnotation = nodePool();
    asAnnotation.spec.template.metadata = { annotations: { k: 'v' } };
    expect(nodePoolTemplateHash(asLabel)).not.toBe(nodePoolTemplateHash(asAnnotation));
  });
});

describe('nodeClassHash', () => {
  const base = nodeClassHash(nodeClass());

  it.each<[string, Edit<AKSNodeClass>]>([
    ['imageFamily', (c) => (c.spec.imageFamily = 'AzureLinux')],
    ['imageVersion', (c) => (c.spec.imageVersion = '202501.01.0')],
    ['osDiskSizeGB', (c) => (c.spec.osDiskSizeGB = 256)],
    ['vnetSubnetID', (c) => (c.spec.vnetSubnetID = '/subscriptions/s/other')],
    ['kubelet setting', (c) => (c.spec.kubelet!.cpuManagerPolicy = 'static')],
    ['kubelet maxPods', (c) => (c.spec.kubelet!.maxPods = 50)],
    ['kubelet sysctl list', (c) => c.spec.kubelet!.allowedUnsafeSysctls!.pop()],
    ['maxPods', (c) => (c.spec.maxPods = 110)],
  ])('changes when %s changes', (_field, edit) => {
    const c = nodeClass();
    edit(c);
    expect(nodeClassHash(c)).not.toBe(base);
  });

  it.each<[string, Edit<AKSNodeClass>]>([
    ['tags (applied to a running VM in place)', (c) => (c.spec.tags = { env: 'staging', owner: 'x' })],
    ['metadata', (c) => (c.metadata = { name: 'default', generation: 7 })],
    ['status', (c) => (c.status = { conditions: [] })],
    ['sysctl order', (c) => c.spec.kubelet!.allowedUnsafeSysctls!.reverse()],
    ['apiVersion', (c) => (c.apiVersion = 'karpenter.azure.com/v1alpha2')],
  ])('ignores %s', (_field, edit) => {
    const c = nodeClass();
    edit(c);
    expect(nodeClassHash(c)).toBe(base);
  });
});

describe('hashAnnotations', () => {
  it('stamps both hashes with their versions under the well-known keys', () => {
    expect(hashAnnotations(nodePool(), nodeClass())).toEqual({
      [WellKnown.nodePoolHashAnnotation]: nodePoolTemplateHash(nodePool()),
      [WellKnown.nodePoolHashVersionAnnotation]: NODEPOOL_HASH_VERSION,
      [WellKnown.nodeClassHashAnnotation]: nodeClassHash(nodeClass()),
      [WellKnown.nodeClassHashVersionAnnotation]: NODECLASS_HASH_VERSION,
    });
    expect(NODEPOOL_HASH_VERSION).toBe('v1');
    expect(NODECLASS_HASH_VERSION).toBe('v1');
  });
});
