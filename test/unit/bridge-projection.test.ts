import { describe, expect, it } from 'vitest';
import { projectNode, projectNodeClaim, projectNodePool } from '../../bridge/projection.js';
import { awaitsInitialization } from '../../shared/decisions/initialization.js';

describe('projection of watched objects', () => {
  it('keeps the NodeClaim fields the filter and resync read, and drops the rest', () => {
    const raw = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name: 'general-x1',
        uid: 'u1',
        resourceVersion: '77',
        generation: 2,
        deletionTimestamp: '2025-03-01T10:00:00Z',
        finalizers: ['karpenter.sh/termination'],
        labels: { a: 'b' },
        managedFields: [{ manager: 'x' }],
      },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [{ key: 'k', operator: 'In', values: ['v'] }],
      },
      status: {
        providerID: 'azure:///vm',
        nodeName: 'aks-1',
        capacity: { cpu: '4' },
        conditions: [
          {
            type: 'Launched',
            status: 'True',
            reason: 'Launched',
            message: '',
            lastTransitionTime: '2025-03-01T09:00:00Z',
            observedGeneration: 2,
          },
        ],
      },
    };
    expect(projectNodeClaim(raw)).toEqual({
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodeClaim',
      metadata: {
        name: 'general-x1',
        uid: 'u1',
        resourceVersion: '77',
        generation: 2,
        deletionTimestamp: '2025-03-01T10:00:00Z',
        finalizers: ['karpenter.sh/termination'],
      },
      spec: {
        nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
        requirements: [],
      },
      status: {
        providerID: 'azure:///vm',
        nodeName: 'aks-1',
        conditions: [
          {
            type: 'Launched',
            status: 'True',
            reason: 'Launched',
            message: '',
            lastTransitionTime: '2025-03-01T09:00:00Z',
            observedGeneration: 2,
          },
        ],
      },
    });
  });

  it('reads a client-library Node (Date timestamps) the same as watch JSON', () => {
    const fromWatch = projectNode({
      metadata: { name: 'n', uid: 'u', resourceVersion: '3', deletionTimestamp: '2025-03-01T10:00:00.000Z' },
      spec: {
        providerID: 'azure:///vm',
        taints: [
          { key: 'karpenter.sh/unregistered', effect: 'NoExecute', timeAdded: '2025-03-01T09:00:00Z' },
        ],
      },
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }], images: [{}] },
    });
    const fromList = projectNode({
      metadata: {
        name: 'n',
        uid: 'u',
        resourceVersion: '3',
        deletionTimestamp: new Date('2025-03-01T10:00:00Z'),
      },
      spec: {
        providerID: 'azure:///vm',
        taints: [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute', timeAdded: new Date() }],
      },
      status: { conditions: [{ type: 'Ready', status: 'False', lastHeartbeatTime: new Date() }] },
    });
    expect(fromList).toEqual(fromWatch);
    expect(fromWatch.spec.taints).toEqual([{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' }]);
  });

  it("keeps every Node condition's type and status, so the spot eviction notice reaches relevance", () => {
    const projected = projectNode({
      metadata: { name: 'n' },
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: '2025-03-01T10:00:00Z',
          },
          { type: 'PreemptionScheduled', status: 'True', reason: 'Preempt', message: 'NotBefore: …' },
        ],
      },
    });
    expect(projected.status?.conditions).toEqual([
      { type: 'Ready', status: 'True' },
      { type: 'PreemptionScheduled', status: 'True' },
    ]);
  });

  it('keeps the NodePool and initialized labels of a Node, and no other', () => {
    const waiting = projectNode({
      metadata: { name: 'n', labels: { 'karpenter.sh/nodepool': 'general', 'kubernetes.io/os': 'linux' } },
    });
    expect(waiting.metadata.labels).toEqual({ 'karpenter.sh/nodepool': 'general' });
    expect(awaitsInitialization(waiting)).toBe(true);
    const done = projectNode({
      metadata: {
        name: 'n',
        labels: { 'karpenter.sh/nodepool': 'general', 'karpenter.sh/initialized': 'true' },
      },
    });
    expect(awaitsInitialization(done)).toBe(false);
    expect(projectNode({ metadata: { name: 'n', labels: { team: 'x' } } }).metadata.labels).toBeUndefined();
  });

  it('tolerates missing and malformed fields', () => {
    expect(projectNodeClaim({}).metadata).toEqual({ name: '' });
    expect(
      projectNodeClaim({ metadata: { name: 'a', labels: { 'karpenter.sh/nodepool': 'general', team: 'x' } } })
        .metadata,
    ).toEqual({ name: 'a', labels: { 'karpenter.sh/nodepool': 'general' } });
    expect(projectNodeClaim({ spec: { nodeClassRef: 'x' } }).spec.nodeClassRef).toEqual({
      group: '',
      kind: '',
      name: '',
    });
    expect(projectNode(null).spec).toEqual({});
    expect(projectNodePool({ spec: { template: {} } }).spec.template.spec.nodeClassRef.kind).toBe('');
  });
});
