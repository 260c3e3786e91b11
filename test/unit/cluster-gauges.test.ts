// Karpenter's state gauges from one view of the cluster: NodePool usage and limits in base units, Node
// allocatable with the well-known labels in snake_case and whether the app manages the Node, and one
// series per NodeClaim condition with the object labels operatorpkg adds.
import { describe, expect, it } from 'vitest';
import { clusterGauges } from '../../shared/decisions/cluster-gauges.js';
import type { NodeClaim, NodePool } from '../../shared/models/index.js';
import type { Node } from '../../shared/models/kube.js';

const pool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general' },
  spec: {
    template: {
      spec: { nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' } },
    },
    limits: { cpu: '100', memory: '400Gi' },
  },
  status: { resources: { cpu: '4', memory: '16Gi', pods: '110' } },
} as unknown as NodePool;

const node: Node = {
  metadata: {
    name: 'aks-general-abc12',
    labels: {
      'karpenter.sh/nodepool': 'general',
      'node.kubernetes.io/instance-type': 'Standard_D4as_v5',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': 'westeurope-1',
      'kubernetes.io/arch': 'amd64',
    },
  },
  spec: { providerID: 'azure:///x' },
  status: { allocatable: { cpu: '3860m', memory: '12Gi' } },
};

const nodeClaim = {
  metadata: { name: 'general-abc12', labels: { 'karpenter.sh/nodepool': 'general' } },
  spec: {
    nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
    requirements: [],
  },
  status: {
    conditions: [
      { type: 'Launched', status: 'True', reason: 'Launched', message: '', lastTransitionTime: '' },
      {
        type: 'Registered',
        status: 'Unknown',
        reason: 'AwaitingReconciliation',
        message: '',
        lastTransitionTime: '',
      },
    ],
  },
} as unknown as NodeClaim;

describe('clusterGauges', () => {
  const gauges = clusterGauges({
    nodePools: [pool],
    nodeClaims: [nodeClaim],
    nodes: [node],
    isManaged: () => true,
  });

  it('reports NodePool usage and limits in base units', () => {
    expect(gauges.karpenter_nodepools_usage).toEqual([
      { labels: { nodepool: 'general', resource_type: 'cpu' }, value: 4 },
      { labels: { nodepool: 'general', resource_type: 'memory' }, value: 16 * 2 ** 30 },
      { labels: { nodepool: 'general', resource_type: 'pods' }, value: 110 },
    ]);
    expect(gauges.karpenter_nodepools_limit.map((p) => [p.labels.resource_type, p.value])).toEqual([
      ['cpu', 100],
      ['memory', 400 * 2 ** 30],
    ]);
  });

  it('reports Node allocatable with the well-known labels', () => {
    expect(gauges.karpenter_nodes_allocatable[0]).toEqual({
      labels: {
        nodepool: 'general',
        instance_type: 'Standard_D4as_v5',
        capacity_type: 'on-demand',
        zone: 'westeurope-1',
        region: '',
        arch: 'amd64',
        os: '',
        node_name: 'aks-general-abc12',
        phase: '',
        managed: 'true',
        resource_type: 'cpu',
      },
      value: 3.86,
    });
  });

  it('counts each NodeClaim condition once, with the object labels', () => {
    expect(gauges.operator_nodeclaim_status_condition_count).toEqual([
      {
        labels: {
          namespace: '',
          name: 'general-abc12',
          type: 'Launched',
          status: 'True',
          reason: 'Launched',
          karpenter_sh_nodepool: 'general',
          karpenter_azure_com_aksnodeclass: 'default',
        },
        value: 1,
      },
      expect.objectContaining({ labels: expect.objectContaining({ type: 'Registered', status: 'Unknown' }) }),
    ]);
  });

  it('skips quantities it cannot parse instead of failing the sweep', () => {
    const bad = { ...pool, status: { resources: { cpu: 'lots' } } } as unknown as NodePool;
    expect(
      clusterGauges({ nodePools: [bad], nodeClaims: [], nodes: [], isManaged: () => false }),
    ).toMatchObject({
      karpenter_nodepools_usage: [],
    });
  });
});
