// CapacityBuffer decisions against upstream's worked cases (kubernetes-sigs/karpenter
// pkg/controllers/capacitybuffer/{helpers,suite}_test.go, pkg/controllers/provisioning/buffers_test.go,
// pkg/apis/autoscaling/v1beta1/suite_test.go): replicas from replicas, percentage and limits; status and
// ReadyForProvisioning per referent; bad specs named by field; virtual pods; Provisioning from a solve's
// placements; and the room existing nodes hold for a buffer.
import { describe, expect, it } from 'vitest';
import {
  bufferReference,
  capacityBufferStatus,
  classifyBufferPods,
  desiredReplicas,
  heldCapacity,
  isBufferReadyForProvisioning,
  limitReplicas,
  percentageReplicas,
  provisioningCondition,
  virtualPods,
  type BufferPodTemplate,
} from '../../shared/decisions/capacity-buffers.js';
import type { ExistingNode, SchedulingPodSpec } from '../../shared/decisions/scheduling/types.js';
import type { CapacityBuffer, CapacityBufferSpec } from '../../shared/models/capacity-buffer.js';

const now = new Date('2026-12-02T00:00:00Z');

function buffer(spec: CapacityBufferSpec, status?: CapacityBuffer['status']): CapacityBuffer {
  return {
    metadata: { name: 'cb', namespace: 'default', uid: 'uid-cb', generation: 3 },
    spec,
    ...(status ? { status } : {}),
  };
}

const podSpec = (requests: Record<string, string>): SchedulingPodSpec => ({
  containers: [{ name: 'c', resources: { requests } }],
});
const cpuPod: BufferPodTemplate = { spec: podSpec({ cpu: '1' }) };
const noRequests: BufferPodTemplate = { spec: { containers: [{ name: 'c' }] } };

describe('percentageReplicas (calculatePercentageReplicas)', () => {
  it.each([
    [10, 20, 2, 'percentage and ceil'],
    [3, 10, 1, 'ceil of fractional results'],
    [1, 1, 1, 'at least 1 when both are positive'],
    [0, 50, 0, '0 when the workload has 0 replicas'],
    [10, 0, 0, '0 when percentage is 0'],
    [5, 100, 5, '100 percent'],
    [5, 200, 10, 'more than 100 percent'],
    [1000, 10, 100, 'large replica counts'],
  ])('%i replicas at %i%% → %i (%s)', (replicas, percentage, expected) => {
    expect(percentageReplicas(replicas, percentage)).toBe(expected);
  });
});

describe('limitReplicas (calculateLimitReplicas)', () => {
  it.each([
    ['cpu limits', { cpu: '4' }, podSpec({ cpu: '1' }), 4],
    ['memory limits', { memory: '8Gi' }, podSpec({ memory: '2Gi' }), 4],
    ['the minimum across resources', { cpu: '10', memory: '4Gi' }, podSpec({ cpu: '1', memory: '2Gi' }), 2],
    ['floor division, never rounding up', { cpu: '3500m' }, podSpec({ cpu: '1' }), 3],
    ['millicore precision', { cpu: '1' }, podSpec({ cpu: '250m' }), 4],
    ['0 when a limit is below one pod', { cpu: '500m' }, podSpec({ cpu: '1' }), 0],
    ['0 for a limit of 0 on a requested resource', { cpu: '0' }, podSpec({ cpu: '1' }), 0],
  ])('%s', (_, limits, spec, expected) => {
    expect(limitReplicas(limits, spec)).toEqual({ replicas: expected });
  });

  it('sums containers, and takes an init container when it is larger', () => {
    const containers = {
      containers: [
        { name: 'a', resources: { requests: { cpu: '1' } } },
        { name: 'b', resources: { requests: { cpu: '1' } } },
      ],
    };
    expect(limitReplicas({ cpu: '8' }, containers)).toEqual({ replicas: 4 });
    expect(
      limitReplicas(
        { cpu: '8' },
        { ...containers, initContainers: [{ name: 'i', resources: { requests: { cpu: '4' } } }] },
      ),
    ).toEqual({ replicas: 2 });
    // A sidecar (restartPolicy Always) runs beside the containers: 1 + 1 + 2 = 4 per pod.
    expect(
      limitReplicas(
        { cpu: '8' },
        {
          ...containers,
          initContainers: [{ name: 's', restartPolicy: 'Always', resources: { requests: { cpu: '2' } } }],
        },
      ),
    ).toEqual({ replicas: 2 });
  });

  it('constrains nothing when the pod requests none of the limited resources', () => {
    expect(limitReplicas({ cpu: '4' }, noRequests.spec)).toEqual({ replicas: undefined });
    expect(limitReplicas({ memory: '4Gi' }, podSpec({ cpu: '1' }))).toEqual({ replicas: undefined });
  });

  it('names a limit that is not a quantity', () => {
    expect(limitReplicas({ cpu: 'lots' }, podSpec({ cpu: '1' }))).toEqual({
      error: expect.stringContaining('spec.limits cpu') as unknown,
    });
  });
});

describe('desiredReplicas (upstream "should resolve buffer replicas from replicas, percentage, and limits")', () => {
  it.each<[string, CapacityBufferSpec, BufferPodTemplate, number | undefined, number]>([
    ['fixed replicas only', { podTemplateRef: { name: 'pt' }, replicas: 7 }, noRequests, undefined, 7],
    [
      'replicas capped by a binding limit',
      { podTemplateRef: { name: 'pt' }, replicas: 10, limits: { cpu: '3' } },
      cpuPod,
      undefined,
      3,
    ],
    [
      'a non-binding limit does not reduce',
      { podTemplateRef: { name: 'pt' }, replicas: 3, limits: { cpu: '10' } },
      cpuPod,
      undefined,
      3,
    ],
    ['limits only', { podTemplateRef: { name: 'pt' }, limits: { cpu: '5' } }, cpuPod, undefined, 5],
    [
      'percentage only',
      { scalableRef: { kind: 'Deployment', name: 'd' }, percentage: 20 },
      noRequests,
      10,
      2,
    ],
    [
      'replicas > percentage: the larger',
      { scalableRef: { kind: 'Deployment', name: 'd' }, replicas: 5, percentage: 20 },
      noRequests,
      10,
      5,
    ],
    [
      'percentage > replicas: the larger',
      { scalableRef: { kind: 'Deployment', name: 'd' }, replicas: 5, percentage: 80 },
      noRequests,
      10,
      8,
    ],
    [
      'the larger of replicas and percentage, capped by a limit',
      { scalableRef: { kind: 'Deployment', name: 'd' }, replicas: 5, percentage: 80, limits: { cpu: '4' } },
      cpuPod,
      10,
      4,
    ],
    [
      'percentage rounds up to a minimum of 1',
      { scalableRef: { kind: 'Deployment', name: 'd' }, percentage: 10 },
      noRequests,
      1,
      1,
    ],
    [
      'percentage of a workload scaled to 0 counts nothing',
      { scalableRef: { kind: 'Deployment', name: 'd' }, percentage: 50 },
      noRequests,
      0,
      0,
    ],
    ['nothing set: no chunk', { scalableRef: { kind: 'Deployment', name: 'd' } }, noRequests, 3, 0],
  ])('%s', (_, spec, template, scalableReplicas, expected) => {
    expect(desiredReplicas(buffer(spec), template, scalableReplicas)).toEqual({ replicas: expected });
  });
});

describe('bufferReference: what to read, or the field that is wrong', () => {
  it.each<[string, CapacityBufferSpec, ReturnType<typeof bufferReference>]>([
    ['a PodTemplate', { podTemplateRef: { name: 'pt' }, replicas: 1 }, { kind: 'PodTemplate', name: 'pt' }],
    [
      'a Deployment, the group defaulting to apps',
      { scalableRef: { kind: 'Deployment', name: 'd' } },
      { kind: 'Scalable', workload: 'Deployment', name: 'd' },
    ],
    [
      'a StatefulSet in group apps',
      { scalableRef: { apiGroup: 'apps', kind: 'StatefulSet', name: 's' } },
      { kind: 'Scalable', workload: 'StatefulSet', name: 's' },
    ],
  ])('%s', (_, spec, expected) => {
    expect(bufferReference(buffer(spec))).toEqual(expected);
  });

  it.each<[string, CapacityBufferSpec, RegExp]>([
    ['neither reference', { replicas: 1 }, /Neither podTemplateRef nor scalableRef is set/],
    [
      'both references',
      { podTemplateRef: { name: 'pt' }, scalableRef: { kind: 'Deployment', name: 'd' }, replicas: 1 },
      /spec.podTemplateRef and spec.scalableRef are both set/,
    ],
    [
      'an unsupported kind',
      { scalableRef: { apiGroup: 'batch', kind: 'Job', name: 'j' } },
      /spec.scalableRef.apiGroup "batch"/,
    ],
    [
      'an unsupported kind in apps',
      { scalableRef: { apiGroup: 'apps', kind: 'DaemonSet', name: 'x' } },
      /spec.scalableRef.kind "DaemonSet"/,
    ],
    [
      'an unsupported API group for a Deployment',
      { scalableRef: { apiGroup: 'batch', kind: 'Deployment', name: 'd' } },
      /spec.scalableRef.apiGroup/,
    ],
    [
      'another provisioning strategy',
      { provisioningStrategy: 'buffer.x-k8s.io/ephemeral', podTemplateRef: { name: 'pt' }, replicas: 1 },
      /spec.provisioningStrategy "buffer.x-k8s.io\/ephemeral"/,
    ],
  ])('%s', (_, spec, message) => {
    const reference = bufferReference(buffer(spec));
    expect(reference.kind).toBe('Invalid');
    expect(reference.kind === 'Invalid' && reference.message).toMatch(message);
  });
});

describe('capacityBufferStatus', () => {
  const readyOf = (status: CapacityBuffer['status']) =>
    status?.conditions?.find((c) => c.type === 'ReadyForProvisioning');

  it('a resolved PodTemplate: ReadyForProvisioning=True Resolved, replicas, the template and its generation', () => {
    const cb = buffer({
      podTemplateRef: { name: 'pt' },
      replicas: 4,
      provisioningStrategy: 'buffer.x-k8s.io/active-capacity',
    });
    const status = capacityBufferStatus(
      cb,
      { kind: 'PodTemplate', name: 'pt', generation: 2, template: cpuPod },
      now,
    );
    expect(status).toMatchObject({
      replicas: 4,
      podTemplateRef: { name: 'pt' },
      podTemplateGeneration: 2,
      provisioningStrategy: 'buffer.x-k8s.io/active-capacity',
    });
    expect(readyOf(status)).toMatchObject({ status: 'True', reason: 'Resolved', observedGeneration: 3 });
    expect(isBufferReadyForProvisioning({ ...cb, status })).toBe(true);
  });

  it('a resolved workload: no podTemplateRef in status (a stale one is dropped), replicas from the percentage', () => {
    const cb = buffer(
      { scalableRef: { kind: 'Deployment', name: 'd' }, percentage: 20 },
      { podTemplateRef: { name: 'old' }, podTemplateGeneration: 1 },
    );
    const status = capacityBufferStatus(cb, { kind: 'Scalable', template: cpuPod, replicas: 10 }, now);
    expect(status.podTemplateRef).toBeUndefined();
    expect(status.podTemplateGeneration).toBeUndefined();
    expect(status.replicas).toBe(2);
  });

  it.each<[string, CapacityBufferSpec, string]>([
    ['PodTemplate not found', { podTemplateRef: { name: 'pt' }, replicas: 1 }, 'PodTemplateNotFound'],
    ['workload not found', { scalableRef: { kind: 'Deployment', name: 'd' } }, 'ScalableRefNotFound'],
  ])('%s: ReadyForProvisioning=False %s', (_, spec, reason) => {
    const status = capacityBufferStatus(buffer(spec), { kind: 'NotFound', message: 'not found' }, now);
    expect(readyOf(status)).toMatchObject({ status: 'False', reason, message: 'not found' });
    expect(isBufferReadyForProvisioning({ ...buffer(spec), status })).toBe(false);
  });

  it('a spec problem or a limit that is no quantity: ResolutionFailed naming the field', () => {
    const invalid = capacityBufferStatus(
      buffer({ replicas: 1 }),
      { kind: 'Invalid', message: 'Neither podTemplateRef nor scalableRef is set' },
      now,
    );
    expect(readyOf(invalid)).toMatchObject({ status: 'False', reason: 'ResolutionFailed' });
    const badLimit = capacityBufferStatus(
      buffer({ podTemplateRef: { name: 'pt' }, limits: { memory: 'plenty' } }),
      { kind: 'PodTemplate', name: 'pt', template: { spec: podSpec({ memory: '1Gi' }) } },
      now,
    );
    expect(readyOf(badLimit)).toMatchObject({ status: 'False', reason: 'ResolutionFailed' });
    expect(readyOf(badLimit)?.message).toMatch(/spec.limits memory/);
  });

  it('is the same object content when nothing changed, so the sweep writes nothing', () => {
    const cb = buffer({ podTemplateRef: { name: 'pt' }, replicas: 2 });
    const first = capacityBufferStatus(cb, { kind: 'PodTemplate', name: 'pt', template: cpuPod }, now);
    const again = capacityBufferStatus(
      { ...cb, status: first },
      { kind: 'PodTemplate', name: 'pt', template: cpuPod },
      new Date(now.getTime() + 60_000),
    );
    expect(again).toEqual(first);
  });
});

describe('virtualPods (BuildVirtualPods)', () => {
  it('status.replicas copies of the template, labels kept, deterministic names and UIDs', () => {
    const cb = buffer({ podTemplateRef: { name: 'pt' }, replicas: 3 }, { replicas: 3 });
    const pods = virtualPods(cb, { labels: { app: 'web' }, spec: podSpec({ cpu: '1', memory: '2Gi' }) });
    expect(pods.map((p) => [p.metadata.name, p.metadata.uid, p.metadata.labels])).toEqual([
      ['capacity-buffer-cb-1', 'uid-cb-1', { app: 'web' }],
      ['capacity-buffer-cb-2', 'uid-cb-2', { app: 'web' }],
      ['capacity-buffer-cb-3', 'uid-cb-3', { app: 'web' }],
    ]);
    expect(pods.every((p) => p.metadata.namespace === 'default')).toBe(true);
  });

  it('none without replicas', () => {
    expect(
      virtualPods(buffer({ podTemplateRef: { name: 'pt' }, replicas: 0 }, { replicas: 0 }), cpuPod),
    ).toEqual([]);
  });
});

describe('provisioningCondition (computeProvisioningCondition)', () => {
  const ready = (replicas: number): CapacityBuffer =>
    buffer(
      { podTemplateRef: { name: 'pt' }, replicas },
      {
        replicas,
        conditions: [
          {
            type: 'ReadyForProvisioning',
            status: 'True',
            reason: 'Resolved',
            message: '',
            lastTransitionTime: now.toISOString(),
          },
        ],
      },
    );
  const provisioningOf = (conditions: ReturnType<typeof provisioningCondition>) =>
    conditions?.find((c) => c.type === 'Provisioning');

  it('True FitsExistingCapacity when every virtual pod fit on existing capacity', () => {
    expect(
      provisioningOf(provisioningCondition(ready(4), { existing: 4, requiresNewClaim: 0, failed: 0 }, now)),
    ).toMatchObject({
      status: 'True',
      reason: 'FitsExistingCapacity',
      message: 'All 4 virtual pods fit on existing capacity',
    });
  });

  it('False RequiresNewCapacity when some needed a new NodeClaim or fit nowhere', () => {
    expect(
      provisioningOf(provisioningCondition(ready(4), { existing: 2, requiresNewClaim: 2, failed: 0 }, now)),
    ).toMatchObject({
      status: 'False',
      reason: 'RequiresNewCapacity',
      message: '2/4 virtual pods required new capacity, 0 failed',
    });
    expect(
      provisioningOf(provisioningCondition(ready(4), { existing: 3, requiresNewClaim: 0, failed: 1 }, now))
        ?.reason,
    ).toBe('RequiresNewCapacity');
  });

  it('False NotReadyForProvisioning and BufferEmpty; nothing when the solve did not see the buffer', () => {
    expect(provisioningOf(provisioningCondition(buffer({ replicas: 1 }), undefined, now))?.reason).toBe(
      'NotReadyForProvisioning',
    );
    expect(provisioningOf(provisioningCondition(ready(0), undefined, now))).toMatchObject({
      status: 'False',
      reason: 'BufferEmpty',
    });
    expect(provisioningCondition(ready(4), undefined, now)).toBeUndefined();
  });
});

describe('classifyBufferPods and heldCapacity', () => {
  const node = (name: string, cpu: string, pods: ExistingNode['pods'] = []): ExistingNode => ({
    name,
    kind: 'Node',
    labels: { 'kubernetes.io/hostname': name },
    allocatable: { cpu, memory: '16Gi', pods: '110' },
    pods,
    initialized: true,
  });
  const cb = buffer({ podTemplateRef: { name: 'pt' }, replicas: 4 }, { replicas: 4 });
  const pods = virtualPods(cb, { spec: podSpec({ cpu: '1', memory: '2Gi' }) });

  it("counts each buffer's virtual pods by where the solve put them; real pods are not counted", () => {
    const bufferOf = new Map(pods.map((p) => [p.metadata.uid, 'default/cb']));
    const ref = (i: number) => ({ namespace: 'default', name: `p${i}`, uid: pods[i]!.metadata.uid });
    const summary = classifyBufferPods(
      {
        existingPlacements: [
          { pod: ref(0), nodeName: 'n1', kind: 'Node' },
          { pod: { namespace: 'default', name: 'real', uid: 'real' }, nodeName: 'n1', kind: 'Node' },
        ],
        newNodeClaims: [
          {
            nodePoolName: 'np',
            requirements: [],
            instanceTypeNames: [],
            requests: {},
            labels: {},
            pods: [ref(1), ref(2)],
            cheapestPrice: 0,
          },
        ],
        unschedulable: [{ pod: ref(3), reason: 'no', causes: [] }],
      },
      bufferOf,
    );
    expect([...summary]).toEqual([['default/cb', { existing: 1, requiresNewClaim: 2, failed: 1 }]]);
  });

  it('places the buffer on the nodes with room after their real pods; what fits nowhere is unplaced', () => {
    const held = heldCapacity(
      pods,
      [
        node('busy', '4', [{ namespace: 'default', name: 'r', requests: { cpu: '3500m' } }]),
        node('warm', '4'),
      ],
      {},
    );
    expect([...held.byNode].map(([name, list]) => [name, list.length])).toEqual([['warm', 4]]);
    expect(held.unplaced).toBe(0);
    const full = heldCapacity(
      pods,
      [node('warm', '4', [{ namespace: 'default', name: 'burst', requests: { cpu: '2' } }])],
      {},
    );
    expect(full.unplaced).toBe(2);
  });
});
