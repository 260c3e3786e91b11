import { describe, expect, it } from 'vitest';
import type { NodeSelectorRequirement } from '../../../shared/models/kube.js';
import { solve } from '../../../shared/decisions/scheduling/index.js';
import type {
  DaemonSet,
  ExistingNode,
  NewNodeClaim,
  SchedulingResult,
  TopologySpreadConstraint,
} from '../../../shared/decisions/scheduling/types.js';
import { CATALOG, instanceType, LARGE, MEDIUM, nodePool, pod, pods, SMALL, ZONES } from './fixtures.js';

const ZONE = 'topology.kubernetes.io/zone';
const HOST = 'kubernetes.io/hostname';
const CAPACITY = 'karpenter.sh/capacity-type';

function requirement(claim: NewNodeClaim | undefined, key: string) {
  return claim?.requirements.find((r) => r.key === key);
}

function podsPerClaim(result: SchedulingResult): number[] {
  return result.newNodeClaims.map((c) => c.pods.length).sort((a, b) => a - b);
}

const spread = (
  key: string,
  whenUnsatisfiable: TopologySpreadConstraint['whenUnsatisfiable'] = 'DoNotSchedule',
  extra: Partial<TopologySpreadConstraint> = {},
): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey: key,
  whenUnsatisfiable,
  labelSelector: { matchLabels: { app: 'web' } },
  ...extra,
});

const web = { labels: { app: 'web' } };

/** A pod of 1 cpu whose required node affinity is these terms (an OR), each a list of requirements. */
function requiringTerms(...terms: NodeSelectorRequirement[][]) {
  return pod(
    { cpu: '1' },
    {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })),
          },
        },
      },
    },
  );
}

describe('node affinity', () => {
  it('tries the required terms in order (an OR) when the first cannot be met', () => {
    const result = solve({
      pods: [
        requiringTerms(
          [{ key: ZONE, operator: 'In', values: ['westus2-9'] }],
          [{ key: ZONE, operator: 'In', values: ['westus2-2'] }],
        ),
      ],
      nodePools: [nodePool('default')],
    });
    expect(result.unschedulable).toEqual([]);
    expect(requirement(result.newNodeClaims[0], ZONE)).toEqual({
      key: ZONE,
      operator: 'In',
      values: ['westus2-2'],
    });
  });

  it('honours a preferred term when it can, and drops it when it cannot be met', () => {
    const preferring = (zone: string) =>
      pod(
        { cpu: '1' },
        {
          affinity: {
            nodeAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                {
                  weight: 10,
                  preference: { matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] },
                },
              ],
            },
          },
        },
      );
    const met = solve({ pods: [preferring('westus2-3')], nodePools: [nodePool('default')] });
    expect(requirement(met.newNodeClaims[0], ZONE)?.values).toEqual(['westus2-3']);
    const relaxed = solve({ pods: [preferring('nowhere-1')], nodePools: [nodePool('default')] });
    expect(relaxed.unschedulable).toEqual([]);
    expect(requirement(relaxed.newNodeClaims[0], ZONE)).toBeUndefined();
  });

  it('reports an unsatisfiable requirement naming the NodePool and the requirement', () => {
    const result = solve({
      pods: [
        pod({ cpu: '1' }, { nodeSelector: { 'node.kubernetes.io/instance-type': 'Standard_Nope' } }),
        pod(),
      ],
      nodePools: [nodePool('default')],
    });
    expect(result.newNodeClaims).toHaveLength(1);
    expect(result.unschedulable).toHaveLength(1);
    expect(result.unschedulable[0]?.reason).toMatch(
      /nodepool "default": no instance type satisfies node.kubernetes.io\/instance-type In \[Standard_Nope\]/,
    );
  });

  it('refuses pods that opt out with karpenter.sh/nodepool DoesNotExist', () => {
    const result = solve({
      pods: [requiringTerms([{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }])],
      nodePools: [nodePool('default')],
    });
    expect(result.unschedulable[0]?.reason).toMatch(/karpenter.sh\/nodepool DoesNotExist/);
  });
});

describe('taints and tolerations', () => {
  const gpuPool = nodePool('gpu', {
    weight: 10,
    taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }],
    startupTaints: [{ key: 'cilium', effect: 'NoExecute' }],
  });

  it('keeps pods without a toleration off a tainted NodePool; startup taints do not repel', () => {
    const plain = solve({ pods: [pod()], nodePools: [gpuPool, nodePool('default')] });
    expect(plain.newNodeClaims[0]?.nodePoolName).toBe('default');
    const tolerating = solve({
      pods: [
        pod(
          { cpu: '1' },
          { tolerations: [{ key: 'gpu', operator: 'Equal', value: 'true', effect: 'NoSchedule' }] },
        ),
      ],
      nodePools: [gpuPool, nodePool('default')],
    });
    expect(tolerating.newNodeClaims[0]?.nodePoolName).toBe('gpu');
    const only = solve({ pods: [pod()], nodePools: [gpuPool] });
    expect(only.unschedulable[0]?.reason).toMatch(
      /nodepool "gpu": did not tolerate taint gpu=true:NoSchedule/,
    );
  });

  it('tolerates a PreferNoSchedule taint only as the last relaxation', () => {
    const soft = nodePool('soft', { taints: [{ key: 'spot-only', effect: 'PreferNoSchedule' }] });
    const result = solve({ pods: [pod()], nodePools: [soft] });
    expect(result.unschedulable).toEqual([]);
    expect(result.newNodeClaims[0]?.nodePoolName).toBe('soft');
  });
});

describe('DaemonSet overhead', () => {
  const agent: DaemonSet = {
    name: 'kube-system/agent',
    template: { spec: { containers: [{ resources: { requests: { cpu: '1', memory: '1Gi' } } }] } },
  };
  const selective: DaemonSet = {
    name: 'kube-system/gpu-driver',
    template: {
      spec: {
        nodeSelector: { accelerator: 'nvidia' },
        containers: [{ resources: { requests: { cpu: '4' } } }],
      },
    },
  };

  it('counts only DaemonSets that would run on the instance type, and adds them to the requests', () => {
    const result = solve({
      pods: [pod({ cpu: '1500m' })],
      nodePools: [nodePool('default')],
      daemonSets: [agent, selective],
    });
    // 1.5 + 1 cpu no longer fits the 2-cpu type; the driver selects a label the NodePool never sets.
    expect(result.newNodeClaims[0]?.instanceTypeNames).toEqual(['medium', 'large']);
    expect(result.newNodeClaims[0]?.requests).toMatchObject({ cpu: '2500m', pods: '2' });
  });

  it('counts a DaemonSet on an existing node only while its pod is not there yet', () => {
    const node = (present: boolean): ExistingNode => ({
      name: 'node-a',
      kind: 'Node',
      labels: {},
      allocatable: { cpu: '2', memory: '8Gi', pods: '110' },
      pods: present
        ? [{ namespace: 'kube-system', requests: { cpu: '1' }, daemonSet: 'kube-system/agent' }]
        : [],
    });
    const missing = solve({
      pods: [pod({ cpu: '1500m' })],
      nodePools: [],
      existingNodes: [node(false)],
      daemonSets: [agent],
    });
    expect(missing.existingPlacements).toEqual([]);
    const room = solve({
      pods: [pod({ cpu: '1' })],
      nodePools: [],
      existingNodes: [node(true)],
      daemonSets: [agent],
    });
    expect(room.existingPlacements.map((p) => p.nodeName)).toEqual(['node-a']);
  });
});

describe('host ports', () => {
  const withPort = (port: number) =>
    pod(
      { cpu: '100m' },
      {
        containers: [
          { resources: { requests: { cpu: '100m' } }, ports: [{ containerPort: 80, hostPort: port }] },
        ],
      },
    );

  it('puts pods asking for the same host port on different nodes', () => {
    const result = solve({
      pods: [withPort(8080), withPort(8080), withPort(9090)],
      nodePools: [nodePool('default')],
    });
    expect(podsPerClaim(result)).toEqual([1, 2]);
  });

  it('does not place a pod whose host port a DaemonSet takes', () => {
    const exporter: DaemonSet = {
      name: 'monitoring/exporter',
      template: { spec: { containers: [{ ports: [{ containerPort: 9100, hostPort: 9100 }] }] } },
    };
    const result = solve({
      pods: [withPort(9100)],
      nodePools: [nodePool('default')],
      daemonSets: [exporter],
    });
    expect(result.newNodeClaims).toEqual([]);
    expect(result.unschedulable[0]?.reason).toMatch(/nodepool "default"/);
  });
});

describe('topology spread', () => {
  it('spreads over zones with maxSkew 1, pinning each NodeClaim to a zone', () => {
    const result = solve({
      pods: pods(6, { cpu: '1' }, { topologySpreadConstraints: [spread(ZONE)] }, web),
      nodePools: [nodePool('default')],
    });
    expect(result.unschedulable).toEqual([]);
    expect(podsPerClaim(result)).toEqual([2, 2, 2]);
    expect(result.newNodeClaims.map((c) => requirement(c, ZONE)?.values?.[0]).sort()).toEqual(ZONES);
  });

  it('counts pods already running in a zone', () => {
    const existing: ExistingNode = {
      name: 'busy',
      kind: 'Node',
      labels: { [ZONE]: 'westus2-1', [HOST]: 'busy' },
      allocatable: { cpu: '0', pods: '0' },
      pods: [
        { namespace: 'default', labels: { app: 'web' } },
        { namespace: 'default', labels: { app: 'web' } },
      ],
    };
    const result = solve({
      pods: pods(2, { cpu: '1' }, { topologySpreadConstraints: [spread(ZONE)] }, web),
      nodePools: [nodePool('default')],
      existingNodes: [existing],
    });
    expect(result.newNodeClaims.map((c) => requirement(c, ZONE)?.values?.[0]).sort()).toEqual([
      'westus2-2',
      'westus2-3',
    ]);
  });

  it('puts one pod per node for a hostname spread of maxSkew 1', () => {
    const result = solve({
      pods: pods(3, { cpu: '100m' }, { topologySpreadConstraints: [spread(HOST)] }, web),
      nodePools: [nodePool('default')],
    });
    expect(podsPerClaim(result)).toEqual([1, 1, 1]);
    expect(result.newNodeClaims.every((c) => requirement(c, HOST) === undefined)).toBe(true);
  });

  it('spreads over capacity types when the NodePool allows both', () => {
    const both = nodePool('default', {
      requirements: [{ key: CAPACITY, operator: 'In', values: ['spot', 'on-demand'] }],
      instanceTypes: [instanceType('medium', 4, 16, 0.2, { spot: true })],
    });
    const result = solve({
      pods: pods(2, { cpu: '1' }, { topologySpreadConstraints: [spread(CAPACITY)] }, web),
      nodePools: [both],
    });
    expect(result.newNodeClaims.map((c) => requirement(c, CAPACITY)?.values).sort()).toEqual([
      ['on-demand'],
      ['spot'],
    ]);
  });

  it('relaxes ScheduleAnyway, never DoNotSchedule', () => {
    const oneZone = nodePool('default', {
      requirements: [
        { key: CAPACITY, operator: 'In', values: ['on-demand'] },
        { key: ZONE, operator: 'In', values: ['westus2-1'] },
      ],
    });
    const strict = solve({
      pods: pods(
        2,
        { cpu: '1' },
        { topologySpreadConstraints: [spread(ZONE, 'DoNotSchedule', { minDomains: 3 })] },
        web,
      ),
      nodePools: [oneZone],
    });
    expect(strict.unschedulable).toHaveLength(1);
    expect(strict.unschedulable[0]?.reason).toMatch(/topology spread on topology.kubernetes.io\/zone/);
    const soft = solve({
      pods: pods(
        2,
        { cpu: '1' },
        { topologySpreadConstraints: [spread(ZONE, 'ScheduleAnyway', { minDomains: 3 })] },
        web,
      ),
      nodePools: [oneZone],
    });
    expect(soft.unschedulable).toEqual([]);
  });
});

describe('pod affinity and anti-affinity', () => {
  const term = (topologyKey: string) => ({ topologyKey, labelSelector: { matchLabels: { app: 'web' } } });

  it('follows pods it requires into their zone', () => {
    const existing: ExistingNode = {
      name: 'web-node',
      kind: 'Node',
      labels: { [ZONE]: 'westus2-2', [HOST]: 'web-node' },
      allocatable: { cpu: '0', pods: '0' },
      pods: [{ namespace: 'default', labels: { app: 'web' } }],
    };
    const result = solve({
      pods: [
        pod(
          { cpu: '1' },
          { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(ZONE)] } } },
        ),
      ],
      nodePools: [nodePool('default')],
      existingNodes: [existing],
    });
    expect(requirement(result.newNodeClaims[0], ZONE)?.values).toEqual(['westus2-2']);
  });

  it('lets self-affine pods start a zone and keeps the rest of them there', () => {
    const result = solve({
      pods: pods(
        4,
        { cpu: '3' },
        { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(ZONE)] } } },
        web,
      ),
      nodePools: [nodePool('default', { instanceTypes: [MEDIUM] })],
    });
    expect(result.unschedulable).toEqual([]);
    expect(new Set(result.newNodeClaims.map((c) => requirement(c, ZONE)?.values?.join()))).toEqual(
      new Set(['westus2-1']),
    );
  });

  it('puts pods with hostname anti-affinity on separate nodes', () => {
    const result = solve({
      pods: pods(
        3,
        { cpu: '100m' },
        { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(HOST)] } } },
        web,
      ),
      nodePools: [nodePool('default')],
    });
    expect(podsPerClaim(result)).toEqual([1, 1, 1]);
  });

  it('keeps selected pods away from a running pod with required anti-affinity (inverse)', () => {
    const guarded: ExistingNode = {
      name: 'guarded',
      kind: 'Node',
      labels: { [HOST]: 'guarded', [ZONE]: 'westus2-1' },
      allocatable: { cpu: '8', memory: '32Gi', pods: '110' },
      pods: [
        {
          namespace: 'default',
          labels: { app: 'db' },
          requests: { cpu: '1' },
          spec: {
            containers: [],
            affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [term(HOST)] } },
          },
        },
      ],
    };
    const result = solve({
      pods: [pod({ cpu: '1' }, {}, web), pod({ cpu: '1' })],
      nodePools: [nodePool('default')],
      existingNodes: [guarded],
    });
    expect(result.existingPlacements).toHaveLength(1);
    expect(result.newNodeClaims[0]?.pods.map((p) => p.uid)).toHaveLength(1);
  });

  it('selects other namespaces through a namespaceSelector', () => {
    const node: ExistingNode = {
      name: 'shared',
      kind: 'Node',
      labels: { [HOST]: 'shared' },
      allocatable: { cpu: '8', memory: '32Gi', pods: '110' },
      pods: [{ namespace: 'team-a', labels: { app: 'web' }, requests: { cpu: '1' } }],
    };
    const antiAffine = (namespaceSelector: { matchLabels: Record<string, string> }) =>
      pod(
        { cpu: '1' },
        {
          affinity: {
            podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [{ ...term(HOST), namespaceSelector }],
            },
          },
        },
      );
    const input = {
      nodePools: [nodePool('default')],
      existingNodes: [node],
      namespaces: [{ name: 'team-a', labels: { team: 'a' } }, { name: 'default' }],
    };
    expect(
      solve({ ...input, pods: [antiAffine({ matchLabels: { team: 'a' } })] }).existingPlacements,
    ).toEqual([]);
    expect(
      solve({ ...input, pods: [antiAffine({ matchLabels: { team: 'b' } })] }).existingPlacements,
    ).toHaveLength(1);
  });

  it('gives up on a preferred anti-affinity rather than leave a pod pending', () => {
    const result = solve({
      pods: pods(
        2,
        { cpu: '1' },
        {
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: term(ZONE) }],
            },
          },
        },
        web,
      ),
      nodePools: [
        nodePool('default', { requirements: [{ key: ZONE, operator: 'In', values: ['westus2-1'] }] }),
      ],
    });
    expect(result.unschedulable).toEqual([]);
  });
});

describe('existing capacity first', () => {
  it('fills an in-flight NodeClaim before opening a new one', () => {
    const inflight: ExistingNode = {
      name: 'default-abc12',
      kind: 'NodeClaim',
      nodePoolName: 'default',
      labels: { 'karpenter.sh/nodepool': 'default', [ZONE]: 'westus2-1' },
      allocatable: { cpu: '3860m', memory: '12Gi', pods: '110' },
    };
    const result = solve({
      pods: pods(4, { cpu: '1' }),
      nodePools: [nodePool('default')],
      existingNodes: [inflight],
    });
    expect(result.existingPlacements.map((p) => [p.nodeName, p.kind])).toEqual([
      ['default-abc12', 'NodeClaim'],
      ['default-abc12', 'NodeClaim'],
      ['default-abc12', 'NodeClaim'],
    ]);
    expect(podsPerClaim(result)).toEqual([1]);
  });

  it('tries initialized nodes first, then by name', () => {
    const node = (name: string, initialized: boolean): ExistingNode => ({
      name,
      kind: 'Node',
      labels: {},
      initialized,
      allocatable: { cpu: '4', pods: '110' },
    });
    const result = solve({
      pods: [pod({ cpu: '1' })],
      nodePools: [],
      existingNodes: [node('c', true), node('a', false), node('b', true)],
    });
    expect(result.existingPlacements.map((p) => p.nodeName)).toEqual(['b']);
  });

  it('does not let an uninitialized node’s startup taints repel pods', () => {
    const booting: ExistingNode = {
      name: 'booting',
      kind: 'Node',
      labels: {},
      taints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
      startupTaints: [{ key: 'node.cilium.io/agent-not-ready', effect: 'NoExecute' }],
      initialized: false,
      allocatable: { cpu: '4', pods: '110' },
    };
    const result = solve({ pods: [pod({ cpu: '1' })], nodePools: [], existingNodes: [booting] });
    expect(result.existingPlacements).toHaveLength(1);
  });
});

describe('minValues', () => {
  const flexible = nodePool('default', {
    requirements: [
      { key: CAPACITY, operator: 'In', values: ['on-demand'] },
      { key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 },
    ],
  });

  it('keeps a NodeClaim only while enough instance types remain', () => {
    const fine = solve({ pods: [pod({ cpu: '3' })], nodePools: [flexible] });
    expect(fine.newNodeClaims[0]?.instanceTypeNames).toEqual(['medium', 'large']);
    expect(requirement(fine.newNodeClaims[0], 'node.kubernetes.io/instance-type')?.minValues).toBe(2);
    const tooBig = solve({ pods: [pod({ cpu: '6' })], nodePools: [flexible] });
    expect(tooBig.unschedulable[0]?.reason).toMatch(/minValues 2 but only 1/);
    const relaxed = solve({
      pods: [pod({ cpu: '6' })],
      nodePools: [flexible],
      options: { minValuesPolicy: 'BestEffort' },
    });
    expect(relaxed.newNodeClaims[0]?.instanceTypeNames).toEqual(['large']);
  });

  it('grows a NodeClaim only while minValues holds', () => {
    const result = solve({ pods: pods(2, { cpu: '3' }), nodePools: [flexible] });
    // Together the two pods fit only `large`: the second needs its own NodeClaim.
    expect(podsPerClaim(result)).toEqual([1, 1]);
  });
});

describe('limits', () => {
  it('stops at the NodePool limits and reports it, falling back to the next NodePool', () => {
    const capped = nodePool('capped', { weight: 10, limits: { cpu: '8' }, instanceTypes: [LARGE] });
    const result = solve({
      pods: pods(3, { cpu: '6' }),
      nodePools: [capped, nodePool('spill', { instanceTypes: [SMALL, MEDIUM, LARGE] })],
    });
    expect(result.newNodeClaims.map((c) => c.nodePoolName).sort()).toEqual(['capped', 'spill', 'spill']);
    const only = solve({ pods: pods(2, { cpu: '6' }), nodePools: [capped] });
    expect(only.unschedulable[0]?.reason).toMatch(
      /nodepool "capped": all instance types exceed the NodePool's limits \(cpu 0 left\)/,
    );
  });

  it('counts a nodes limit', () => {
    const result = solve({
      pods: pods(3, { cpu: '6' }),
      nodePools: [nodePool('default', { limits: { nodes: '2' }, instanceTypes: CATALOG })],
    });
    expect(result.newNodeClaims).toHaveLength(2);
    expect(result.unschedulable).toHaveLength(1);
  });
});
