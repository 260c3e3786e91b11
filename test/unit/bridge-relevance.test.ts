import { describe, expect, it } from 'vitest';
import type { Notification, Seen } from '../../bridge/relevance.js';
import { decide, digestOf, isProvisionable, needsWork } from '../../bridge/relevance.js';
import { projectPod, type PodView } from '../../bridge/projection.js';
import type { AKSNodeClass, Condition, Node, NodeClaim, NodePool } from '../../shared/models/index.js';

const aksRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };
const otherRef = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' };

function nodeClaim(overrides: {
  name?: string;
  uid?: string;
  rv?: string;
  ref?: NodeClaim['spec']['nodeClassRef'];
  generation?: number;
  deletionTimestamp?: string;
  finalizers?: string[];
  providerID?: string;
  conditions?: Condition[];
  capacity?: Record<string, string>;
}): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: overrides.name ?? 'general-abc12',
      uid: overrides.uid ?? 'uid-1',
      resourceVersion: overrides.rv ?? '100',
      generation: overrides.generation ?? 1,
      ...(overrides.deletionTimestamp !== undefined && { deletionTimestamp: overrides.deletionTimestamp }),
      ...(overrides.finalizers !== undefined && { finalizers: overrides.finalizers }),
    },
    spec: { nodeClassRef: overrides.ref ?? aksRef, requirements: [] },
    status: {
      ...(overrides.providerID !== undefined && { providerID: overrides.providerID }),
      ...(overrides.conditions !== undefined && { conditions: overrides.conditions }),
      ...(overrides.capacity !== undefined && { capacity: overrides.capacity }),
    },
  };
}

function condition(
  type: string,
  status: Condition['status'],
  reason: string,
  extra: Partial<Condition> = {},
) {
  return { type, status, reason, message: '', lastTransitionTime: '2025-01-01T00:00:00Z', ...extra };
}

function node(overrides: {
  name?: string;
  uid?: string;
  rv?: string;
  providerID?: string;
  tainted?: boolean;
  otherTaints?: Node['spec']['taints'];
  ready?: 'True' | 'False';
  /** PreemptionScheduled's status: the spot eviction notice. */
  preemption?: 'True' | 'False';
  labels?: Record<string, string>;
}): Node {
  const taints = [
    ...(overrides.tainted ? [{ key: 'karpenter.sh/unregistered', effect: 'NoExecute' as const }] : []),
    ...(overrides.otherTaints ?? []),
  ];
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: overrides.name ?? 'aks-node-1',
      uid: overrides.uid ?? 'node-uid-1',
      resourceVersion: overrides.rv ?? '7',
      ...(overrides.labels && { labels: overrides.labels }),
    },
    spec: {
      ...(overrides.providerID !== undefined && { providerID: overrides.providerID }),
      taints,
    },
    ...((overrides.ready !== undefined || overrides.preemption !== undefined) && {
      status: {
        conditions: [
          ...(overrides.ready !== undefined ? [{ type: 'Ready', status: overrides.ready }] : []),
          ...(overrides.preemption !== undefined
            ? [{ type: 'PreemptionScheduled', status: overrides.preemption }]
            : []),
        ],
      },
    }),
  };
}

function nodePool(generation: number, ref = aksRef, rv = '5'): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', uid: 'pool-uid', resourceVersion: rv, generation },
    spec: { template: { spec: { nodeClassRef: ref, requirements: [] } } },
  };
}

function nodeClass(generation: number, rv = '9'): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default', uid: 'class-uid', resourceVersion: rv, generation },
    spec: {},
  };
}

function seenOf(kind: Notification['kind'], object: Notification['object']): Seen {
  return { uid: object.metadata.uid ?? '', digest: digestOf(kind, object) };
}

function changeTypes(notification: Notification): string[] {
  return decide(notification).changes.map((c) => c.changeType);
}

describe('NodeClaims', () => {
  it('forwards an added NodeClaim that refers to an AKSNodeClass, naming it and its resource version', () => {
    const claim = nodeClaim({ rv: '123' });
    const decision = decide({
      kind: 'NodeClaim',
      verb: 'add',
      object: claim,
      previous: undefined,
      initialList: false,
    });
    expect(decision.changes).toEqual([
      { kind: 'NodeClaim', name: 'general-abc12', uid: 'uid-1', resourceVersion: '123', changeType: 'ADDED' },
    ]);
    expect(decision.next).toEqual(seenOf('NodeClaim', claim));
  });

  it('ignores NodeClaims with another nodeClassRef, on add, update and delete', () => {
    for (const ref of [
      otherRef,
      { group: 'karpenter.azure.com', kind: 'Other', name: 'x' },
      { ...otherRef, kind: 'AKSNodeClass' },
    ]) {
      const claim = nodeClaim({ ref });
      for (const verb of ['add', 'update', 'delete'] as const) {
        const decision = decide({
          kind: 'NodeClaim',
          verb,
          object: claim,
          previous: undefined,
          initialList: false,
        });
        expect(decision).toEqual({ changes: [], next: undefined });
      }
    }
  });

  it('forwards updates that change what handlers act on', () => {
    const base = nodeClaim({});
    const previous = seenOf('NodeClaim', base);
    const variants: NodeClaim[] = [
      nodeClaim({ generation: 2 }),
      nodeClaim({ deletionTimestamp: '2025-01-01T00:00:00Z' }),
      nodeClaim({ finalizers: ['karpenter.sh/termination'] }),
      nodeClaim({ conditions: [condition('Launched', 'Unknown', 'VMProvisioning')] }),
    ];
    for (const updated of variants) {
      expect(
        changeTypes({ kind: 'NodeClaim', verb: 'update', object: updated, previous, initialList: false }),
      ).toEqual(['MODIFIED']);
    }
  });

  it('forwards a condition whose status or reason changed', () => {
    const before = nodeClaim({ conditions: [condition('Launched', 'Unknown', 'VMProvisioning')] });
    const previous = seenOf('NodeClaim', before);
    for (const after of [
      nodeClaim({ conditions: [condition('Launched', 'True', 'Launched')] }),
      nodeClaim({ conditions: [condition('Launched', 'Unknown', 'Other')] }),
      nodeClaim({
        conditions: [condition('Launched', 'Unknown', 'VMProvisioning', { observedGeneration: 2 })],
      }),
    ]) {
      expect(
        changeTypes({ kind: 'NodeClaim', verb: 'update', object: after, previous, initialList: false }),
      ).toEqual(['MODIFIED']);
    }
  });

  it('does not forward status heartbeats: new resource version, condition message or time, capacity', () => {
    const before = nodeClaim({ conditions: [condition('Launched', 'True', 'Launched')] });
    const previous = seenOf('NodeClaim', before);
    const heartbeat = nodeClaim({
      rv: '101',
      conditions: [
        condition('Launched', 'True', 'Launched', {
          message: 'new words',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        }),
      ],
      capacity: { cpu: '4' },
    });
    expect(
      decide({ kind: 'NodeClaim', verb: 'update', object: heartbeat, previous, initialList: false }),
    ).toEqual({
      changes: [],
      next: previous,
    });
  });

  it('does not forward the conditions only the sweep and the workflows act on: Drifted, DisruptionReason, Consolidatable', () => {
    const launched = [
      condition('Launched', 'True', 'Launched'),
      condition('Registered', 'True', 'Registered'),
    ];
    const before = nodeClaim({ conditions: launched });
    const previous = seenOf('NodeClaim', before);
    for (const [type, reason] of [
      ['Drifted', 'NodeClassDrift'],
      ['DisruptionReason', 'Drifted'],
      ['Consolidatable', 'Consolidatable'],
    ] as const) {
      const marked = nodeClaim({ conditions: [...launched, condition(type, 'True', reason)] });
      expect(
        decide({ kind: 'NodeClaim', verb: 'update', object: marked, previous, initialList: false }),
      ).toEqual({ changes: [], next: previous });
    }
    // Beside one of them, a change a handler acts on is still forwarded.
    const relaunched = nodeClaim({
      conditions: [
        condition('Launched', 'False', 'LaunchFailed'),
        condition('Drifted', 'True', 'NodeClassDrift'),
      ],
    });
    expect(
      changeTypes({ kind: 'NodeClaim', verb: 'update', object: relaunched, previous, initialList: false }),
    ).toEqual(['MODIFIED']);
  });

  it("does not forward a launched NodeClaim's node-join (Registered, Initialized), but its deletion", () => {
    const providerID =
      'azure:///subscriptions/s/resourcegroups/rg/providers/Microsoft.Compute/virtualMachines/v';
    const launched = condition('Launched', 'True', 'Launched');
    const before = nodeClaim({ providerID, conditions: [launched] });
    const previous = seenOf('NodeClaim', before);
    for (const joined of [
      nodeClaim({ providerID, conditions: [launched, condition('Registered', 'True', 'Registered')] }),
      nodeClaim({
        providerID,
        conditions: [
          launched,
          condition('Registered', 'True', 'Registered'),
          condition('Initialized', 'True', 'Initialized'),
        ],
      }),
    ]) {
      expect(
        decide({ kind: 'NodeClaim', verb: 'update', object: joined, previous, initialList: false }),
      ).toEqual({ changes: [], next: seenOf('NodeClaim', joined) });
    }
    const deleting = nodeClaim({
      providerID,
      conditions: [launched],
      deletionTimestamp: '2026-01-01T00:00:00Z',
    });
    expect(
      changeTypes({ kind: 'NodeClaim', verb: 'update', object: deleting, previous, initialList: false }),
    ).toEqual(['MODIFIED']);
  });

  it("does not forward the launch's own writes once the VM is there (the providerID, then Launched), but a providerID that goes and the deletion", () => {
    const providerID =
      'azure:///subscriptions/s/resourcegroups/rg/providers/Microsoft.Compute/virtualMachines/v';
    const created = nodeClaim({});
    const inFlight = nodeClaim({
      providerID,
      conditions: [condition('Launched', 'Unknown', 'VMProvisioning')],
    });
    const steps: [NodeClaim, NodeClaim][] = [
      [created, nodeClaim({ providerID })],
      [created, inFlight],
      [inFlight, nodeClaim({ providerID, conditions: [condition('Launched', 'True', 'Launched')] })],
      [inFlight, nodeClaim({ providerID, conditions: [condition('Launched', 'False', 'LaunchFailed')] })],
      [inFlight, nodeClaim({ providerID, finalizers: ['karpenter.sh/termination'] })],
    ];
    for (const [before, after] of steps) {
      const previous = seenOf('NodeClaim', before);
      // Remembered as it now is, so the next change is judged against it.
      expect(
        decide({ kind: 'NodeClaim', verb: 'update', object: after, previous, initialList: false }),
      ).toEqual({ changes: [], next: seenOf('NodeClaim', after) });
    }
    const previous = seenOf('NodeClaim', inFlight);
    expect(
      changeTypes({ kind: 'NodeClaim', verb: 'update', object: created, previous, initialList: false }),
    ).toEqual(['MODIFIED']);
    const deleting = nodeClaim({ providerID, deletionTimestamp: '2026-01-01T00:00:00Z' });
    expect(
      changeTypes({ kind: 'NodeClaim', verb: 'update', object: deleting, previous, initialList: false }),
    ).toEqual(['MODIFIED']);
  });

  it('treats conditions and finalizers as sets, not lists', () => {
    const a = nodeClaim({
      finalizers: ['a', 'b'],
      conditions: [
        condition('Launched', 'True', 'Launched'),
        condition('Registered', 'Unknown', 'NodeNotFound'),
      ],
    });
    const b = nodeClaim({
      finalizers: ['b', 'a'],
      conditions: [
        condition('Registered', 'Unknown', 'NodeNotFound'),
        condition('Launched', 'True', 'Launched'),
      ],
    });
    expect(digestOf('NodeClaim', a)).toBe(digestOf('NodeClaim', b));
  });

  it('forwards the deletion of a NodeClaim that is ours', () => {
    const claim = nodeClaim({ rv: '140' });
    const decision = decide({
      kind: 'NodeClaim',
      verb: 'delete',
      object: claim,
      previous: seenOf('NodeClaim', claim),
      initialList: false,
    });
    expect(decision.changes.map((c) => [c.changeType, c.resourceVersion])).toEqual([['DELETED', '140']]);
    expect(decision.next).toBeUndefined();
  });

  it('names the NodePool of a deleted NodeClaim, whose budget slot the deletion frees', () => {
    const claim = nodeClaim({ rv: '141' });
    claim.metadata.labels = { 'karpenter.sh/nodepool': 'general' };
    const decision = decide({
      kind: 'NodeClaim',
      verb: 'delete',
      object: claim,
      previous: seenOf('NodeClaim', claim),
      initialList: false,
    });
    expect(decision.changes).toEqual([
      {
        kind: 'NodeClaim',
        name: 'general-abc12',
        uid: 'uid-1',
        resourceVersion: '141',
        changeType: 'DELETED',
        nodePool: 'general',
      },
    ]);
  });

  it('reports the old object as deleted when a name comes back with a new uid', () => {
    const old = nodeClaim({ uid: 'old' });
    const fresh = nodeClaim({ uid: 'new', rv: '300' });
    const decision = decide({
      kind: 'NodeClaim',
      verb: 'update',
      object: fresh,
      previous: seenOf('NodeClaim', old),
      initialList: false,
    });
    expect(decision.changes.map((c) => [c.changeType, c.uid])).toEqual([
      ['DELETED', 'old'],
      ['MODIFIED', 'new'],
    ]);
    expect(decision.next?.uid).toBe('new');
  });

  it('on the initial list announces only NodeClaims that still need work', () => {
    const launched = nodeClaim({
      providerID: 'azure:///x',
      conditions: [condition('Registered', 'True', 'Registered')],
    });
    const pending = nodeClaim({});
    const deleting = nodeClaim({
      ...{ providerID: 'azure:///x' },
      deletionTimestamp: '2025-01-01T00:00:00Z',
    });
    expect(
      changeTypes({
        kind: 'NodeClaim',
        verb: 'add',
        object: launched,
        previous: undefined,
        initialList: true,
      }),
    ).toEqual([]);
    expect(
      changeTypes({
        kind: 'NodeClaim',
        verb: 'add',
        object: pending,
        previous: undefined,
        initialList: true,
      }),
    ).toEqual(['ADDED']);
    expect(
      changeTypes({
        kind: 'NodeClaim',
        verb: 'add',
        object: deleting,
        previous: undefined,
        initialList: true,
      }),
    ).toEqual(['ADDED']);
    // Remembered either way, so the next real change is compared against it.
    expect(
      decide({ kind: 'NodeClaim', verb: 'add', object: launched, previous: undefined, initialList: true })
        .next,
    ).toEqual(seenOf('NodeClaim', launched));
  });

  it('forwards an update for a NodeClaim it has not seen before (created while the watch was down)', () => {
    expect(
      changeTypes({
        kind: 'NodeClaim',
        verb: 'update',
        object: nodeClaim({}),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual(['MODIFIED']);
  });
});

describe('needsWork (the resync selection)', () => {
  const registered = [condition('Registered', 'True', 'Registered')];
  it.each([
    ['no providerID', nodeClaim({ conditions: registered }), true],
    ['launched, not registered', nodeClaim({ providerID: 'azure:///x' }), true],
    [
      'registered Unknown',
      nodeClaim({
        providerID: 'azure:///x',
        conditions: [condition('Registered', 'Unknown', 'NodeNotFound')],
      }),
      true,
    ],
    [
      'being deleted',
      nodeClaim({
        providerID: 'azure:///x',
        conditions: registered,
        deletionTimestamp: '2025-01-01T00:00:00Z',
      }),
      true,
    ],
    ['registered and healthy', nodeClaim({ providerID: 'azure:///x', conditions: registered }), false],
    ['another node class', nodeClaim({ ref: otherRef }), false],
  ])('NodeClaim %s → %s', (_label, claim, expected) => {
    expect(needsWork('NodeClaim', claim)).toBe(expected);
  });

  it('selects Nodes that still carry the unregistered taint or an eviction notice, and no NodePools or AKSNodeClasses', () => {
    expect(needsWork('Node', node({ tainted: true }))).toBe(true);
    expect(needsWork('Node', node({ tainted: false }))).toBe(false);
    expect(needsWork('Node', node({ ready: 'True', preemption: 'True' }))).toBe(true);
    expect(needsWork('Node', node({ ready: 'True', preemption: 'False' }))).toBe(false);
    expect(needsWork('NodePool', nodePool(1))).toBe(false);
    expect(needsWork('AKSNodeClass', nodeClass(1))).toBe(false);
  });
});

describe('Nodes', () => {
  it('forwards an added Node with the unregistered taint, not one without', () => {
    expect(
      changeTypes({
        kind: 'Node',
        verb: 'add',
        object: node({ tainted: true }),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual(['ADDED']);
    expect(
      changeTypes({
        kind: 'Node',
        verb: 'add',
        object: node({ tainted: false }),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual([]);
  });

  it('forwards an update that adds the taint or changes providerID, taints or readiness while tainted', () => {
    const tainted = node({ tainted: true });
    const previous = seenOf('Node', tainted);
    expect(
      changeTypes({ kind: 'Node', verb: 'update', object: tainted, previous: undefined, initialList: false }),
    ).toEqual(['MODIFIED']);
    for (const updated of [
      node({ tainted: true, providerID: 'azure:///vm' }),
      node({ tainted: true, otherTaints: [{ key: 'example.com/gpu', effect: 'NoSchedule' }] }),
      node({ tainted: true, ready: 'True' }),
    ]) {
      expect(
        changeTypes({ kind: 'Node', verb: 'update', object: updated, previous, initialList: false }),
      ).toEqual(['MODIFIED']);
    }
  });

  it('does not forward heartbeats of a tainted Node, nor updates of untainted Nodes, and forgets the taint once removed', () => {
    const tainted = node({ tainted: true, ready: 'False' });
    const previous = seenOf('Node', tainted);
    expect(
      changeTypes({
        kind: 'Node',
        verb: 'update',
        object: node({ tainted: true, ready: 'False', rv: '8' }),
        previous,
        initialList: false,
      }),
    ).toEqual([]);
    const registered = decide({
      kind: 'Node',
      verb: 'update',
      object: node({ tainted: false }),
      previous,
      initialList: false,
    });
    expect(registered).toEqual({ changes: [], next: undefined });
  });

  it("forwards a registered NodePool Node's readiness and taint changes until it is labelled initialized", () => {
    const pool = { 'karpenter.sh/nodepool': 'general' };
    const notReady = node({ labels: pool, ready: 'False' });
    const previous = seenOf('Node', notReady);
    const ready = decide({
      kind: 'Node',
      verb: 'update',
      object: node({ labels: pool, ready: 'True' }),
      previous,
      initialList: false,
    });
    expect(ready.changes.map((c) => c.changeType)).toEqual(['MODIFIED']);
    // A heartbeat of the same Node changes nothing a handler reads.
    expect(
      changeTypes({
        kind: 'Node',
        verb: 'update',
        object: node({ labels: pool, ready: 'True', rv: '9' }),
        previous: ready.next,
        initialList: false,
      }),
    ).toEqual([]);
    const initialized = decide({
      kind: 'Node',
      verb: 'update',
      object: node({ labels: { ...pool, 'karpenter.sh/initialized': 'true' }, ready: 'True' }),
      previous: ready.next,
      initialList: false,
    });
    expect(initialized).toEqual({ changes: [], next: undefined });
  });

  describe('spot eviction notice (PreemptionScheduled=True)', () => {
    const initialized = { 'karpenter.sh/nodepool': 'spot', 'karpenter.sh/initialized': 'true' };
    const update = (object: Node, previous: Seen | undefined) =>
      decide({ kind: 'Node', verb: 'update', object, previous, initialList: false });

    it('forwards an initialized Node once when the notice appears, not on its heartbeats while it stays', () => {
      const healthy = update(node({ labels: initialized, ready: 'True', preemption: 'False' }), undefined);
      expect(healthy).toEqual({ changes: [], next: undefined });
      const noticed = update(node({ labels: initialized, ready: 'True', preemption: 'True' }), healthy.next);
      expect(noticed.changes.map((c) => [c.kind, c.name, c.changeType])).toEqual([
        ['Node', 'aks-node-1', 'MODIFIED'],
      ]);
      expect(noticed.next).toBeDefined();
      const heartbeat = update(
        node({ labels: initialized, ready: 'True', preemption: 'True', rv: '8' }),
        noticed.next,
      );
      expect(heartbeat).toEqual({ changes: [], next: noticed.next });
    });

    it('forgets the Node when the notice goes, and forwards it again on a new notice', () => {
      const noticed = update(node({ ready: 'True', preemption: 'True' }), undefined);
      const withdrawn = update(node({ ready: 'True', preemption: 'False', rv: '8' }), noticed.next);
      expect(withdrawn).toEqual({ changes: [], next: undefined });
      const again = update(node({ ready: 'True', preemption: 'True', rv: '9' }), withdrawn.next);
      expect(again.changes.map((c) => c.changeType)).toEqual(['MODIFIED']);
    });

    it('announces a noticed Node on add and on the initial list (a bridge restart within the notice)', () => {
      for (const initialList of [false, true]) {
        expect(
          changeTypes({
            kind: 'Node',
            verb: 'add',
            object: node({ ready: 'True', preemption: 'True' }),
            previous: undefined,
            initialList,
          }),
        ).toEqual(['ADDED']);
      }
    });

    it('forwards a tainted Node whose notice appears (the notice is part of the digest)', () => {
      const tainted = node({ tainted: true, ready: 'True' });
      expect(
        changeTypes({
          kind: 'Node',
          verb: 'update',
          object: node({ tainted: true, ready: 'True', preemption: 'True' }),
          previous: seenOf('Node', tainted),
          initialList: false,
        }),
      ).toEqual(['MODIFIED']);
    });
  });

  it('forwards the deletion of a Node whose providerID is an Azure one, tainted or not', () => {
    const azure = node({
      providerID: 'azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm',
    });
    expect(
      changeTypes({ kind: 'Node', verb: 'delete', object: azure, previous: undefined, initialList: false }),
    ).toEqual(['DELETED']);
    expect(
      changeTypes({
        kind: 'Node',
        verb: 'delete',
        object: node({ providerID: 'aws:///i-123' }),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual([]);
    expect(
      changeTypes({
        kind: 'Node',
        verb: 'delete',
        object: node({ tainted: true }),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual([]);
  });
});

describe('NodePools and AKSNodeClasses', () => {
  it('forwards spec changes (generation), not status updates', () => {
    const previous = seenOf('NodePool', nodePool(1));
    expect(
      changeTypes({
        kind: 'NodePool',
        verb: 'update',
        object: nodePool(2, aksRef, '6'),
        previous,
        initialList: false,
      }),
    ).toEqual(['MODIFIED']);
    expect(
      changeTypes({
        kind: 'NodePool',
        verb: 'update',
        object: nodePool(1, aksRef, '6'),
        previous,
        initialList: false,
      }),
    ).toEqual([]);

    const classPrevious = seenOf('AKSNodeClass', nodeClass(3));
    expect(
      changeTypes({
        kind: 'AKSNodeClass',
        verb: 'update',
        object: nodeClass(4, '10'),
        previous: classPrevious,
        initialList: false,
      }),
    ).toEqual(['MODIFIED']);
    expect(
      changeTypes({
        kind: 'AKSNodeClass',
        verb: 'update',
        object: nodeClass(3, '10'),
        previous: classPrevious,
        initialList: false,
      }),
    ).toEqual([]);
  });

  it('ignores NodePools for other node classes, and announces once a NodePool that stops being ours', () => {
    expect(
      changeTypes({
        kind: 'NodePool',
        verb: 'add',
        object: nodePool(1, otherRef),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual([]);
    const previous = seenOf('NodePool', nodePool(1));
    const decision = decide({
      kind: 'NodePool',
      verb: 'update',
      object: nodePool(2, otherRef),
      previous,
      initialList: false,
    });
    expect(decision.changes.map((c) => c.changeType)).toEqual(['MODIFIED']);
    expect(decision.next).toBeUndefined();
  });

  it('forwards adds and deletes, but not the initial list (the sweep compares hashes on its own)', () => {
    expect(
      changeTypes({
        kind: 'NodePool',
        verb: 'add',
        object: nodePool(1),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual(['ADDED']);
    expect(
      changeTypes({
        kind: 'NodePool',
        verb: 'add',
        object: nodePool(1),
        previous: undefined,
        initialList: true,
      }),
    ).toEqual([]);
    expect(
      changeTypes({
        kind: 'AKSNodeClass',
        verb: 'delete',
        object: nodeClass(1),
        previous: undefined,
        initialList: false,
      }),
    ).toEqual(['DELETED']);
  });
});

describe('Pods', () => {
  const unschedulable = { status: 'False' as const, reason: 'Unschedulable' };
  function pod(overrides: Partial<PodView> & { uid?: string } = {}): PodView {
    const { uid, ...rest } = overrides;
    return {
      metadata: { name: 'web-1', namespace: 'shop', uid: uid ?? 'pod-uid-1', resourceVersion: '7' },
      scheduled: unschedulable,
      ...rest,
    };
  }
  const podNotification = (
    object: PodView,
    verb: Notification['verb'] = 'update',
    previous?: Seen,
  ): Notification<'Pod'> => ({ kind: 'Pod', verb, object, previous, initialList: false });

  it.each([
    ['unschedulable, unbound, not nominated', pod(), true],
    ['not yet tried by the scheduler', pod({ scheduled: undefined }), false],
    [
      'waiting on a scheduling gate',
      pod({ scheduled: { status: 'False', reason: 'SchedulingGated' } }),
      false,
    ],
    ['bound', pod({ nodeName: 'aks-1' }), false],
    ['nominated for a preemption', pod({ nominatedNodeName: 'aks-1' }), false],
    ['a DaemonSet pod', pod({ ownerKinds: ['DaemonSet'] }), false],
    ['a mirror pod', pod({ ownerKinds: ['Node'] }), false],
    ['owned by a ReplicaSet', pod({ ownerKinds: ['ReplicaSet'] }), true],
  ])('a pod %s is provisionable: %s', (_case, object, provisionable) => {
    expect(isProvisionable(object)).toBe(provisionable);
    expect(needsWork('Pod', object)).toBe(provisionable);
  });

  it('announces a pod once when it becomes provisionable, with its namespace, however often it is retried', () => {
    const first = decide(podNotification(pod({ scheduled: undefined }), 'add'));
    expect(first).toEqual({ changes: [], next: undefined });
    const becomes = decide(podNotification(pod()));
    expect(becomes.changes).toEqual([
      {
        kind: 'Pod',
        namespace: 'shop',
        name: 'web-1',
        uid: 'pod-uid-1',
        resourceVersion: '7',
        changeType: 'MODIFIED',
      },
    ]);
    const retried = decide(podNotification(pod(), 'update', becomes.next));
    expect(retried.changes).toEqual([]);
    expect(retried.next).toEqual(becomes.next);
  });

  it('forgets a pod that binds or is deleted, and announces a new pod of the same name', () => {
    const seen: Seen = { uid: 'pod-uid-1', digest: digestOf('Pod', pod()) };
    expect(decide(podNotification(pod({ nodeName: 'aks-1' }), 'update', seen))).toEqual({
      changes: [],
      next: undefined,
    });
    expect(decide(podNotification(pod(), 'delete', seen)).changes).toEqual([]);
    const recreated = decide(podNotification(pod({ uid: 'pod-uid-2' }), 'add', seen));
    expect(recreated.changes.map((c) => [c.uid, c.changeType])).toEqual([['pod-uid-2', 'ADDED']]);
  });
});

describe('projectPod', () => {
  it('keeps only what decides provisionability', () => {
    const projected = projectPod({
      metadata: {
        name: 'web-1',
        namespace: 'shop',
        uid: 'u',
        resourceVersion: '3',
        labels: { app: 'web' },
        ownerReferences: [
          { kind: 'ReplicaSet', name: 'web-abc', controller: true },
          { kind: 'ConfigMap', name: 'x' },
        ],
      },
      spec: {
        nodeName: '',
        containers: [{ name: 'app', image: 'nginx', resources: { requests: { cpu: '1' } } }],
      },
      status: {
        nominatedNodeName: '',
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes' },
        ],
      },
    });
    expect(projected).toEqual({
      metadata: { name: 'web-1', namespace: 'shop', uid: 'u', resourceVersion: '3' },
      scheduled: { status: 'False', reason: 'Unschedulable' },
      ownerKinds: ['ReplicaSet'],
    });
  });
});
