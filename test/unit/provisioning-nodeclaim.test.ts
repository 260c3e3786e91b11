import { describe, expect, it } from 'vitest';
import {
  provisionedNodeClaim,
  provisionedNodeClaimName,
} from '../../shared/decisions/provisioned-nodeclaim.js';
import { isProvisionable } from '../../shared/decisions/provisionable-pod.js';
import type { NewNodeClaim } from '../../shared/decisions/scheduling/index.js';
import { WellKnown, type NodePool } from '../../shared/models/karpenter.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';

const nodePool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general', uid: 'pool-uid' },
  spec: {
    template: {
      metadata: { labels: { team: 'blue' }, annotations: { note: 'kept' } },
      spec: {
        nodeClassRef: nodeClassRef('default'),
        requirements: [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }],
        taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'node.cilium.io/agent-not-ready', value: 'true', effect: 'NoExecute' }],
        expireAfter: '720h',
        terminationGracePeriod: '1h',
      },
    },
  },
};

const claim: NewNodeClaim = {
  nodePoolName: 'general',
  requirements: [
    { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] },
    { key: WellKnown.instanceTypeLabel, operator: 'In', values: ['Standard_D2s_v5', 'Standard_D4s_v5'] },
    { key: WellKnown.zoneLabel, operator: 'In', values: ['westus2-1'] },
  ],
  instanceTypeNames: ['Standard_D2s_v5', 'Standard_D4s_v5'],
  requests: { cpu: '1500m', memory: '3Gi', pods: '3' },
  labels: { team: 'blue', [WellKnown.zoneLabel]: 'westus2-1' },
  pods: [
    { namespace: 'shop', name: 'b', uid: 'uid-b' },
    { namespace: 'shop', name: 'a', uid: 'uid-a' },
  ],
  cheapestPrice: 0.096,
};

describe('provisionedNodeClaim', () => {
  it('is the NodePool template with the solve’s requirements, labels and requests, named per window and pods', () => {
    const written = provisionedNodeClaim({
      windowId: 'w1',
      claim,
      nodePool,
      nodeClass: nodeClass('default', 'Ubuntu2204'),
    });
    expect(written.metadata.generateName).toBe('general-');
    expect(written.metadata.name).toMatch(/^general-[0-9a-f]{8}$/);
    expect(written.metadata.labels).toEqual({
      team: 'blue',
      [WellKnown.zoneLabel]: 'westus2-1',
      [WellKnown.nodePoolLabel]: 'general',
    });
    expect(written.metadata.annotations).toMatchObject({ note: 'kept' });
    expect(written.metadata.annotations?.[WellKnown.nodePoolHashAnnotation]).toBeDefined();
    expect(written.metadata.annotations?.[WellKnown.nodeClassHashAnnotation]).toBeDefined();
    expect(written.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'NodePool', name: 'general', uid: 'pool-uid' }),
    ]);
    expect(written.spec).toMatchObject({
      nodeClassRef: nodeClassRef('default'),
      requirements: claim.requirements,
      taints: nodePool.spec.template.spec.taints,
      startupTaints: nodePool.spec.template.spec.startupTaints,
      expireAfter: '720h',
      terminationGracePeriod: '1h',
      resources: { requests: { cpu: '1500m', memory: '3Gi', pods: '3' } },
    });
  });

  it('names the same pods in the same window alike, in any order, and differently in another window', () => {
    const reordered = { ...claim, pods: [...claim.pods].reverse() };
    expect(provisionedNodeClaimName('w1', reordered)).toBe(provisionedNodeClaimName('w1', claim));
    expect(provisionedNodeClaimName('w2', claim)).not.toBe(provisionedNodeClaimName('w1', claim));
    const otherPods = { ...claim, pods: [{ namespace: 'shop', name: 'c', uid: 'uid-c' }] };
    expect(provisionedNodeClaimName('w1', otherPods)).not.toBe(provisionedNodeClaimName('w1', claim));
  });
});

describe('isProvisionable', () => {
  const pending = { scheduled: { status: 'False', reason: 'Unschedulable' } };
  it.each([
    [pending, true],
    [{ ...pending, nodeName: 'n1' }, false],
    [{ ...pending, nominatedNodeName: 'n1' }, false],
    [{ ...pending, ownerKinds: ['DaemonSet'] }, false],
    [{ ...pending, ownerKinds: ['Node'] }, false],
    [{ ...pending, ownerKinds: ['ReplicaSet'] }, true],
    [{ scheduled: { status: 'False', reason: 'SchedulingGated' } }, false],
    [{}, false],
  ])('%j → %s', (pod, expected) => {
    expect(isProvisionable(pod)).toBe(expected);
  });
});
