// Why a pod waits, on the pure solve: each row is a scenario and, per NodePool asked in order, the cause
// the solve gives for turning the pod down (the first constraint that excluded it), so the decision
// record and the FailedScheduling event name one cause a user can act on. Rows with two NodePools show
// that each is judged on its own.
import { describe, expect, it } from 'vitest';
import type { ExclusionCause } from '../../shared/decisions/explain/decision-record.js';
import { solve } from '../../shared/decisions/scheduling/index.js';
import type {
  DaemonSet,
  ExistingNode,
  PodAffinityTerm,
  SchedulingInput,
  SchedulingPod,
} from '../../shared/decisions/scheduling/types.js';
import { CATALOG, instanceType, LARGE, nodePool, pod, ZONES } from './scheduling/fixtures.js';

const ZONE = 'topology.kubernetes.io/zone';

const daemonSet = (name: string, spec: DaemonSet['template']['spec']): DaemonSet => ({
  name: `kube-system/${name}`,
  template: { spec },
});

const withHostPort = (port: number): SchedulingPod =>
  pod(
    { cpu: '100m' },
    {
      containers: [
        { resources: { requests: { cpu: '100m' } }, ports: [{ containerPort: port, hostPort: port }] },
      ],
    },
  );

const dbTerm: PodAffinityTerm = { labelSelector: { matchLabels: { app: 'db' } }, topologyKey: ZONE };

/** A full node in each zone running a `db` pod. */
const dbNodes: ExistingNode[] = ZONES.map((zone, i) => ({
  name: `db-${i}`,
  kind: 'Node',
  labels: { [ZONE]: zone },
  allocatable: { cpu: '1', memory: '1Gi', pods: '110' },
  pods: [{ namespace: 'default', labels: { app: 'db' }, requests: { cpu: '1' } }],
}));

/** Offerings of every catalog type, all marked unavailable (failure memory), or only in one zone. */
const unavailable = (zone?: string) =>
  CATALOG.map((it) => ({
    ...it,
    offerings: it.offerings.map((o) => ({ ...o, available: zone !== undefined && o.zone !== zone })),
  }));

interface Row {
  name: string;
  input: Omit<SchedulingInput, 'pods'> & { pods?: SchedulingPod[] };
  pod?: SchedulingPod;
  expected: [nodePool: string, cause: ExclusionCause][];
  existingNodesFull?: number;
}

const rows: Row[] = [
  {
    name: 'a node selector no instance type satisfies',
    pod: pod({ cpu: '1' }, { nodeSelector: { 'karpenter.azure.com/sku-cpu': '64' } }),
    input: { nodePools: [nodePool('default')] },
    expected: [['default', 'Requirement']],
  },
  {
    name: 'a label the NodePool does not define',
    pod: pod({ cpu: '1' }, { nodeSelector: { team: 'a' } }),
    input: { nodePools: [nodePool('default')] },
    expected: [['default', 'Requirement']],
  },
  {
    name: 'a zone the NodePool never offers',
    pod: pod({ cpu: '1' }, { nodeSelector: { [ZONE]: 'westus2-9' } }),
    input: { nodePools: [nodePool('default')] },
    expected: [['default', 'Requirement']],
  },
  {
    name: 'an untolerated taint',
    input: {
      nodePools: [nodePool('gpu', { taints: [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }] })],
    },
    expected: [['gpu', 'Taint']],
  },
  {
    name: 'limits used up',
    input: { nodePools: [nodePool('capped', { limits: { cpu: '0' } })] },
    expected: [['capped', 'Limit']],
  },
  {
    name: 'every offering unavailable',
    input: { nodePools: [nodePool('default', { instanceTypes: unavailable() })] },
    expected: [['default', 'NoOffering']],
  },
  {
    name: 'the zone the pod asks for is unavailable',
    pod: pod({ cpu: '1' }, { nodeSelector: { [ZONE]: 'westus2-2' } }),
    input: { nodePools: [nodePool('default', { instanceTypes: unavailable('westus2-2') })] },
    expected: [['default', 'NoOffering']],
  },
  {
    name: 'pod affinity to pods that exist nowhere',
    pod: pod(
      { cpu: '1' },
      { affinity: { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [dbTerm] } } },
    ),
    input: { nodePools: [nodePool('default')] },
    expected: [['default', 'Topology']],
  },
  {
    name: 'anti-affinity against pods in every zone',
    pod: pod(
      { cpu: '1' },
      { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [dbTerm] } } },
    ),
    input: { nodePools: [nodePool('default')], existingNodes: dbNodes },
    expected: [['default', 'Topology']],
    existingNodesFull: 3,
  },
  {
    name: 'a host port a DaemonSet takes on every node',
    pod: withHostPort(9100),
    input: {
      nodePools: [nodePool('default')],
      daemonSets: [
        daemonSet('exporter', { containers: [{ ports: [{ containerPort: 9100, hostPort: 9100 }] }] }),
      ],
    },
    expected: [['default', 'HostPort']],
  },
  {
    name: 'a volume bound to a zone the NodePool does not launch in',
    pod: {
      ...pod({ cpu: '1' }),
      volumeRequirements: [{ key: ZONE, operator: 'In', values: ['westus2-2'] }],
    },
    input: {
      nodePools: [
        nodePool('zone-1', { requirements: [{ key: ZONE, operator: 'In', values: ['westus2-1'] }] }),
      ],
    },
    expected: [['zone-1', 'VolumeZone']],
  },
  {
    name: 'a pod that fits an empty node but not beside the DaemonSets',
    pod: pod({ cpu: '7' }),
    input: {
      nodePools: [nodePool('default')],
      daemonSets: [daemonSet('agent', { containers: [{ resources: { requests: { cpu: '1500m' } } }] })],
    },
    expected: [['default', 'DaemonSetOverhead']],
  },
  {
    name: 'a pod bigger than any instance type',
    pod: pod({ cpu: '100' }),
    input: { nodePools: [nodePool('default')] },
    expected: [['default', 'Resources']],
  },
  {
    name: 'minValues the instance types that fit cannot meet',
    pod: pod({ cpu: '7' }),
    input: {
      nodePools: [
        nodePool('default', {
          requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'Exists', minValues: 2 }],
        }),
      ],
    },
    expected: [['default', 'MinValues']],
  },
  {
    name: 'a NodePool whose node class is missing',
    input: {
      nodePools: [nodePool('orphan', { instanceTypes: [], notReady: 'its node class "x" does not exist' })],
    },
    expected: [['orphan', 'NodePoolNotReady']],
  },
  {
    name: 'a NodePool whose requirements cannot be read',
    input: {
      nodePools: [nodePool('broken', { requirements: [{ key: 'a', operator: 'Gt', values: ['x'] }] })],
    },
    expected: [['broken', 'NodePoolNotReady']],
  },
  {
    name: 'no NodePool at all',
    input: { nodePools: [] },
    expected: [['', 'NoNodePool']],
  },
  {
    name: 'an unreadable request',
    pod: pod({ cpu: 'lots' }),
    input: { nodePools: [nodePool('default')] },
    expected: [['', 'InvalidPod']],
  },
  {
    name: 'node affinity with matchFields',
    pod: pod(
      { cpu: '1' },
      {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n'] }] }],
            },
          },
        },
      },
    ),
    input: { nodePools: [nodePool('default')] },
    expected: [['', 'InvalidPod']],
  },
  {
    name: 'two NodePools: a tainted one first, then one at its limits',
    input: {
      nodePools: [
        nodePool('tainted', { weight: 10, taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
        nodePool('capped', { limits: { cpu: '4' } }),
      ],
    },
    pod: pod({ cpu: '6' }),
    expected: [
      ['tainted', 'Taint'],
      ['capped', 'Limit'],
    ],
  },
  {
    name: 'two NodePools: one of small types only, one whose offerings are unavailable',
    pod: pod({ cpu: '6' }),
    input: {
      nodePools: [
        nodePool('small-only', { weight: 10, instanceTypes: [instanceType('tiny', 2, 8, 0.1)] }),
        nodePool('large', { instanceTypes: unavailable() }),
      ],
    },
    expected: [
      ['small-only', 'Resources'],
      ['large', 'NoOffering'],
    ],
  },
  {
    name: 'two NodePools: a volume pinned to zone 3, one NodePool in zone 1, one needing a label',
    pod: {
      ...pod({ cpu: '1' }, { nodeSelector: { tier: 'gold' } }),
      volumeRequirements: [{ key: ZONE, operator: 'In', values: ['westus2-3'] }],
    },
    input: {
      nodePools: [
        nodePool('gold-zone-1', {
          weight: 10,
          labels: { tier: 'gold' },
          requirements: [{ key: ZONE, operator: 'In', values: ['westus2-1'] }],
        }),
        nodePool('silver', { labels: { tier: 'silver' } }),
      ],
    },
    expected: [
      ['gold-zone-1', 'VolumeZone'],
      ['silver', 'Requirement'],
    ],
  },
  {
    name: 'a full existing node, then a NodePool whose only type is too small',
    pod: pod({ cpu: '4' }),
    input: {
      nodePools: [nodePool('default', { instanceTypes: [instanceType('tiny', 2, 8, 0.1)] })],
      existingNodes: [
        {
          name: 'full',
          kind: 'Node',
          labels: {},
          allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
          pods: [{ namespace: 'default', requests: { cpu: '3' } }],
        },
      ],
    },
    expected: [['default', 'Resources']],
    existingNodesFull: 1,
  },
];

describe('exclusion causes', () => {
  it.each(rows)('$name', (row) => {
    const result = solve({ ...row.input, pods: [row.pod ?? pod({ cpu: '1' })] });
    expect(result.newNodeClaims).toEqual([]);
    expect(result.unschedulable).toHaveLength(1);
    const [unschedulable] = result.unschedulable;
    expect(unschedulable?.causes.map((c) => [c.nodePool, c.cause])).toEqual(row.expected);
    expect(unschedulable?.existingNodesFull).toBe(row.existingNodesFull);
    for (const cause of unschedulable?.causes ?? []) {
      // One line each, and the FailedScheduling text carries every one of them.
      expect(cause.message).not.toMatch(/\n/);
      expect(unschedulable?.reason).toContain(cause.message);
    }
  });

  it('names each NodePool in the FailedScheduling text beside its own cause', () => {
    const result = solve({
      pods: [pod({ cpu: '6' })],
      nodePools: [
        nodePool('tainted', { weight: 10, taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
        nodePool('capped', { limits: { cpu: '4' } }),
      ],
    });
    expect(result.unschedulable[0]?.reason).toBe(
      'nodepool "tainted": did not tolerate taint dedicated:NoSchedule; ' +
        `nodepool "capped": all instance types exceed the NodePool's limits (cpu 4 left)`,
    );
  });

  it('places the pod when its volume is bound to a zone the NodePool launches in, and pins the zone', () => {
    const result = solve({
      pods: [
        { ...pod({ cpu: '1' }), volumeRequirements: [{ key: ZONE, operator: 'In', values: ['westus2-2'] }] },
      ],
      nodePools: [nodePool('default', { instanceTypes: [LARGE] })],
    });
    expect(result.unschedulable).toEqual([]);
    expect(result.newNodeClaims[0]?.requirements).toContainEqual({
      key: ZONE,
      operator: 'In',
      values: ['westus2-2'],
    });
  });
});
