import type { V1PersistentVolume, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { InstanceType } from '../../shared/decisions/scheduling/index.js';
import { nodePoolUsage, solveInput } from '../../shared/lifecycle/provisioning/solve-input.js';
import type { ProvisioningState } from '../../shared/lifecycle/provisioning/cluster-state.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../shared/models/karpenter.js';
import type { Node } from '../../shared/models/kube.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';

function instanceType(name: string, cpu: number, memoryGi: number): InstanceType {
  return {
    name,
    labels: { [WellKnown.instanceTypeLabel]: name },
    capacity: { cpu: String(cpu), memory: `${memoryGi}Gi`, pods: '110' },
    allocatable: { cpu: `${cpu * 1000 - 100}m`, memory: `${memoryGi - 1}Gi`, pods: '110' },
    offerings: [{ zone: 'westus2-1', capacityType: 'on-demand', price: cpu / 10, available: true }],
  };
}
const types = [instanceType('D2', 2, 8), instanceType('D4', 4, 16)];

function pool(
  name: string,
  extra: Partial<NodePool['spec']> = {},
  labels: Record<string, string> = {},
): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: { metadata: { labels }, spec: { nodeClassRef: nodeClassRef('default'), requirements: [] } },
      ...extra,
    },
  };
}

function pendingPod(name: string, labels: Record<string, string> = {}): V1Pod {
  return {
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      labels,
      creationTimestamp: new Date('2026-01-01T00:00:00Z'),
    },
    spec: { containers: [{ name: 'app', resources: { requests: { cpu: '500m' } } }] },
  };
}

function inFlight(name: string, extra: Partial<NodeClaim['status']> = {}): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, labels: { [WellKnown.nodePoolLabel]: 'general' } },
    spec: {
      nodeClassRef: nodeClassRef('default'),
      requirements: [
        { key: WellKnown.instanceTypeLabel, operator: 'In', values: ['D2', 'D4'] },
        { key: WellKnown.zoneLabel, operator: 'In', values: ['westus2-1'] },
      ],
      taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }],
      startupTaints: [{ key: 'agent', effect: 'NoExecute' }],
    },
    status: { ...extra },
  };
}

function state(overrides: Partial<ProvisioningState> = {}): ProvisioningState {
  return {
    nodes: [],
    boundPods: new Map(),
    pendingPods: [pendingPod('a')],
    nodePools: [pool('general')],
    nodeClasses: [nodeClass('default', 'Ubuntu2204')],
    nodeClaims: [],
    daemonSets: [],
    ...overrides,
  };
}

const options = { instanceTypesFor: () => types, policies: {} };

describe('solveInput', () => {
  it('takes dynamic AKSNodeClass NodePools only, with their instance types; one whose class is missing is asked, and ruled out', () => {
    const ec2 = pool('ec2');
    ec2.spec.template.spec.nodeClassRef = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'x' };
    const classless = pool('classless');
    classless.spec.template.spec.nodeClassRef = nodeClassRef('missing');
    const input = solveInput(
      state({ nodePools: [pool('general'), pool('static', { replicas: 2 }), ec2, classless] }),
      options,
    );
    expect(input.nodePools.map((p) => p.name)).toEqual(['general', 'classless']);
    expect(input.nodePools[0]!.instanceTypes).toBe(types);
    expect(input.nodePools[1]).toMatchObject({
      instanceTypes: [],
      notReady: 'its node class "missing" does not exist',
    });
    expect(input.pods.map((p) => p.metadata)).toEqual([
      {
        name: 'a',
        namespace: 'shop',
        uid: 'uid-a',
        labels: {},
        creationTimestamp: '2026-01-01T00:00:00.000Z',
      },
    ]);
  });

  it('a selector narrows both pods and NodePools (stacks sharing a cluster)', () => {
    const input = solveInput(
      state({
        pendingPods: [pendingPod('mine', { run: 'r1' }), pendingPod('theirs', { run: 'r2' })],
        nodePools: [pool('general', {}, { run: 'r1' }), pool('elsewhere', {}, { run: 'r2' })],
      }),
      { ...options, selector: 'run=r1' },
    );
    expect(input.pods.map((p) => p.metadata.name)).toEqual(['mine']);
    expect(input.nodePools.map((p) => p.name)).toEqual(['general']);
  });

  it('an unlaunched in-flight NodeClaim offers its smallest instance type, its taints, its single-valued labels', () => {
    const input = solveInput(state({ nodeClaims: [inFlight('general-1')] }), options);
    expect(input.existingNodes).toEqual([
      {
        name: 'general-1',
        kind: 'NodeClaim',
        nodePoolName: 'general',
        labels: { [WellKnown.zoneLabel]: 'westus2-1', [WellKnown.nodePoolLabel]: 'general' },
        taints: [{ key: 'dedicated', value: 'web', effect: 'NoSchedule' }],
        allocatable: { cpu: '1900m', memory: '7Gi', pods: '110' },
        initialized: false,
      },
    ]);
  });

  it('a launched in-flight NodeClaim offers its status allocatable; one with a Node or a failed launch none', () => {
    const launched = inFlight('general-1', { allocatable: { cpu: '3860m', memory: '12Gi', pods: '30' } });
    const registered = inFlight('general-2', { nodeName: 'aks-general-2' });
    const failed = inFlight('general-3', {
      conditions: [{ type: 'Launched', status: 'False', reason: 'x', message: '', lastTransitionTime: '' }],
    });
    const input = solveInput(state({ nodeClaims: [launched, registered, failed] }), options);
    expect(input.existingNodes?.map((n) => [n.name, n.allocatable.cpu])).toEqual([['general-1', '3860m']]);
  });

  it('an uninitialized managed Node sheds ephemeral and startup taints; an initialized one keeps them all', () => {
    const node = (name: string, initialized: boolean): Node => ({
      metadata: {
        name,
        labels: {
          [WellKnown.nodePoolLabel]: 'general',
          ...(initialized && { [WellKnown.initializedLabel]: 'true' }),
        },
      },
      spec: {
        taints: [
          { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
          { key: 'agent', effect: 'NoExecute' },
          { key: 'dedicated', value: 'web', effect: 'NoSchedule' },
        ],
      },
      status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
    });
    const claimOf = (nodeName: string) => inFlight(`claim-${nodeName}`, { nodeName });
    const input = solveInput(
      state({
        nodes: [
          node('fresh', false),
          node('old', true),
          { ...node('cordoned', true), spec: { unschedulable: true } },
        ],
        nodeClaims: [claimOf('fresh'), claimOf('old')],
        boundPods: new Map([['old', [pendingPod('bound')]]]),
      }),
      options,
    );
    const byName = new Map(input.existingNodes?.map((n) => [n.name, n]));
    expect([...byName.keys()]).toEqual(['fresh', 'old']);
    expect(byName.get('fresh')?.taints?.map((t) => t.key)).toEqual(['dedicated']);
    expect(byName.get('old')?.taints?.map((t) => t.key)).toEqual([
      'node.kubernetes.io/not-ready',
      'agent',
      'dedicated',
    ]);
    expect(byName.get('old')?.pods?.map((p) => p.name)).toEqual(['bound']);
  });
});

describe('nodePoolUsage', () => {
  it('adds launched capacity, the largest option for unlaunched NodeClaims, and one node each', () => {
    const claims = [
      inFlight('general-1', { capacity: { cpu: '2', memory: '8Gi' } }),
      inFlight('general-2'),
      {
        ...inFlight('other-1', { capacity: { cpu: '64' } }),
        metadata: { name: 'other-1', labels: { [WellKnown.nodePoolLabel]: 'other' } },
      },
    ];
    expect(nodePoolUsage('general', claims, types)).toEqual({
      nodes: '2',
      cpu: '6',
      memory: String(24 * 1024 ** 3),
      pods: '110',
    });
  });
});

describe('volume requirements', () => {
  const claim = (name: string, volumeName?: string): V1PersistentVolumeClaim => ({
    metadata: { name, namespace: 'shop' },
    spec: { ...(volumeName && { volumeName }) },
  });
  const volume = (name: string, key: string, zone: string): V1PersistentVolume => ({
    metadata: { name },
    spec: {
      nodeAffinity: {
        required: { nodeSelectorTerms: [{ matchExpressions: [{ key, operator: 'In', values: [zone] }] }] },
      },
    },
  });
  const mounting = (...claimNames: string[]): V1Pod => {
    const pod = pendingPod('db');
    pod.spec!.volumes = claimNames.map((claimName, i) => ({
      name: `v${i}`,
      persistentVolumeClaim: { claimName },
    }));
    return pod;
  };

  it("takes a bound claim's volume node affinity, with Azure Disk's zone key read as the zone label", () => {
    const input = solveInput(
      state({
        pendingPods: [mounting('data', 'scratch')],
        volumes: {
          claims: [claim('data', 'pv-data'), claim('scratch')],
          volumes: [volume('pv-data', 'topology.disk.csi.azure.com/zone', 'westus2-2')],
        },
      }),
      options,
    );
    // The claim not bound yet binds where the pod lands: it requires nothing.
    expect(input.pods[0]?.volumeRequirements).toEqual([
      { key: WellKnown.zoneLabel, operator: 'In', values: ['westus2-2'] },
    ]);
  });

  it('leaves a pod without volumes, or a window without a volume reader, unconstrained', () => {
    expect(solveInput(state(), options).pods[0]?.volumeRequirements).toBeUndefined();
    expect(
      solveInput(state({ pendingPods: [mounting('data')] }), options).pods[0]?.volumeRequirements,
    ).toBeUndefined();
  });
});
