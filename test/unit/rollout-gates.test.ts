// The rollout's health gates (shared/decisions/rollout-gates.ts), a table per gate: which nodes are the
// rollout's replacements, when a failed replacement, a slow initialization, a pod that never got Ready,
// an unhealthy Node or a crash-looping pod fails a gate, and when it does not (before the limit, before
// the gates' start, on an old node, a spot eviction notice, restarts the old nodes see as much); each
// failure names its gate, its subject and the figures.
import { describe, expect, it } from 'vitest';
import { DisruptionAnnotations } from '../../shared/decisions/disruption-state.js';
import { AZURE_REPAIR_POLICIES } from '../../shared/decisions/node-repair/policies.js';
import {
  failedRolloutGates,
  oldPodsNeeded,
  replacedNodeClaims,
  type RolloutGateInput,
  type RolloutPod,
} from '../../shared/decisions/rollout-gates.js';
import { ConditionTypes, type NodeClaim } from '../../shared/models/karpenter.js';
import type { Node, NodeCondition } from '../../shared/models/kube.js';

const STARTED = new Date('2026-11-30T12:00:00Z');
const at = (seconds: number) => new Date(STARTED.getTime() + seconds * 1000).toISOString();
const NOW = new Date(STARTED.getTime() + 3600_000);
const BACKOFF_BASE_MS = 5 * 60_000;

function claim(
  name: string,
  options: {
    drifted?: boolean;
    createdAt?: string;
    initialized?: boolean;
    deleting?: boolean;
    annotations?: Record<string, string>;
  } = {},
): NodeClaim {
  const conditions = [
    ...(options.drifted
      ? [{ type: ConditionTypes.drifted, status: 'True' as const, reason: 'NodePoolDrifted', message: '' }]
      : []),
    ...(options.initialized !== false
      ? [{ type: ConditionTypes.initialized, status: 'True' as const, reason: 'Initialized', message: '' }]
      : []),
  ];
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      creationTimestamp: options.createdAt ?? (options.drifted ? at(-86_400) : at(60)),
      ...(options.annotations ? { annotations: options.annotations } : {}),
      ...(options.deleting ? { deletionTimestamp: NOW.toISOString() } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      providerID: `azure:///vm/${name}`,
      conditions: conditions.map((c) => ({ ...c, lastTransitionTime: at(0) })),
    },
  };
}

function node(name: string, conditions: NodeCondition[] = [{ type: 'Ready', status: 'True' }]): Node {
  return {
    metadata: { name: `aks-${name}` },
    spec: { providerID: `azure:///vm/${name}` },
    status: { conditions },
  };
}

function pod(nodeName: string, name: string, options: Partial<RolloutPod> = {}): RolloutPod {
  return {
    namespace: 'apps',
    name,
    nodeName: `aks-${nodeName}`,
    phase: 'Running',
    terminating: false,
    scheduledAt: at(120),
    ready: true,
    restarts: 0,
    ...options,
  };
}

function gates(
  claims: NodeClaim[],
  options: { nodes?: Node[]; pods?: RolloutPod[]; gatesFrom?: Date } = {},
): ReturnType<typeof failedRolloutGates> {
  const nodes = options.nodes ?? claims.map((c) => node(c.metadata.name));
  const input: RolloutGateInput = {
    nodeClaims: claims,
    nodesFor: (c) => nodes.filter((n) => n.spec.providerID === c.status?.providerID),
    podsOn: (name) => (options.pods ?? []).filter((p) => p.nodeName === name),
    gatesFrom: options.gatesFrom ?? STARTED,
    now: NOW,
    limits: {
      initializedWithinSeconds: 600,
      podReadyWithinSeconds: 300,
      maxPodRestarts: 3,
      replacementBackoffBaseMs: BACKOFF_BASE_MS,
      repairPolicies: AZURE_REPAIR_POLICIES,
    },
  };
  return failedRolloutGates(input);
}

/** Backoff annotations of a failed attempt at `failedAt` (the executor's failedAttemptAnnotations). */
const failedAt = (when: Date, attempts = 1) => ({
  [DisruptionAnnotations.replacementAttempts]: String(attempts),
  [DisruptionAnnotations.replacementBackoffUntil]: new Date(
    when.getTime() + BACKOFF_BASE_MS * Math.min(8, 2 ** (attempts - 1)),
  ).toISOString(),
});

const old = claim('old', { drifted: true });
const fresh = claim('new');

describe('the rollout’s replacements', () => {
  it('are the up-to-date NodeClaims created since the gates’ start, not deleting', () => {
    const before = claim('before', { createdAt: at(-60) });
    const deleting = claim('gone', { deleting: true });
    expect(replacedNodeClaims([old, fresh, before, deleting], STARTED).map((c) => c.metadata.name)).toEqual([
      'new',
    ]);
  });
});

describe('healthy', () => {
  it('replacements initialized, Nodes Ready, pods Ready: no gate fails', () => {
    expect(gates([old, fresh], { pods: [pod('new', 'a'), pod('old', 'b', { restarts: 9 })] })).toEqual([]);
  });
});

describe('ReplacementFailed', () => {
  it.each<[string, NodeClaim[], string[]]>([
    [
      'a drifted node’s replacement failed since the start',
      [claim('old', { drifted: true, annotations: failedAt(new Date(STARTED.getTime() + 600_000)) })],
      ['the replacement of NodeClaim old failed at 2026-11-30T12:10:00.000Z (attempt 1)'],
    ],
    [
      'a third attempt (the hold doubled twice) since the start',
      [claim('old', { drifted: true, annotations: failedAt(new Date(STARTED.getTime() + 60_000), 3) })],
      ['the replacement of NodeClaim old failed at 2026-11-30T12:01:00.000Z (attempt 3)'],
    ],
    [
      'a failure before the start',
      [claim('old', { drifted: true, annotations: failedAt(new Date(STARTED.getTime() - 60_000)) })],
      [],
    ],
    [
      'a replacement not Initialized 600 s after its creation',
      [claim('new', { initialized: false, createdAt: at(600) })],
      ['NodeClaim new is not Initialized 3000 s after its creation (limit 600 s)'],
    ],
    [
      'a replacement not Initialized yet, within its limit',
      [claim('new', { initialized: false, createdAt: at(3300) })],
      [],
    ],
  ])('%s', (_, claims, messages) => {
    const failed = gates(claims);
    expect(failed.map((f) => f.message)).toEqual(messages);
    expect(failed.every((f) => f.gate === 'ReplacementFailed')).toBe(true);
  });
});

describe('PodNotReady', () => {
  it.each<[string, RolloutPod[], string[]]>([
    [
      'a pod on a replacement not Ready 300 s after it was scheduled',
      [pod('new', 'web', { ready: false, scheduledAt: at(3000) })],
      ['pod apps/web on Node aks-new is not Ready 600 s after it was scheduled (limit 300 s)'],
    ],
    ['within the limit', [pod('new', 'web', { ready: false, scheduledAt: at(3400) })], []],
    [
      'Ready a moment ago: it gets the same time to come back',
      [pod('new', 'web', { ready: false, scheduledAt: at(100), readyChangedAt: at(3500) })],
      [],
    ],
    [
      'finished or terminating pods',
      [
        pod('new', 'job', { ready: false, phase: 'Succeeded' }),
        pod('new', 'x', { ready: false, terminating: true }),
      ],
      [],
    ],
    ['a pod on an old node', [pod('old', 'web', { ready: false, scheduledAt: at(0) })], []],
  ])('%s', (_, pods, messages) => {
    const failed = gates([old, fresh], { pods });
    expect(failed.map((f) => [f.gate, f.message])).toEqual(messages.map((m) => ['PodNotReady', m]));
  });
});

describe('NodeUnhealthy', () => {
  it.each<[string, NodeCondition[], string[]]>([
    [
      'Ready=False',
      [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }],
      ['Node aks-new was Ready and is now Ready=False (KubeletNotReady)'],
    ],
    [
      'Ready=Unknown',
      [{ type: 'Ready', status: 'Unknown' }],
      ['Node aks-new was Ready and is now Ready=Unknown'],
    ],
    [
      'a repair policy’s condition, without its toleration',
      [
        { type: 'Ready', status: 'True' },
        { type: 'kubernetes.azure.com/NodeHealthy', status: 'False', reason: 'KernelDeadlock' },
      ],
      [
        "Node aks-new has kubernetes.azure.com/NodeHealthy=False (KernelDeadlock), a node repair policy's condition",
      ],
    ],
    [
      'a spot eviction notice',
      [
        { type: 'Ready', status: 'True' },
        { type: 'PreemptionScheduled', status: 'True' },
      ],
      [],
    ],
  ])('%s', (_, conditions, messages) => {
    const failed = gates([old, fresh], { nodes: [node('old'), node('new', conditions)] });
    expect(failed.map((f) => [f.gate, f.subject, f.message])).toEqual(
      messages.map((m) => ['NodeUnhealthy', 'aks-new', m]),
    );
  });

  it('a replacement not Initialized yet (never Ready) and an old node are not judged', () => {
    const joining = claim('new', { initialized: false, createdAt: at(3500) });
    const notReady = [{ type: 'Ready', status: 'False' as const }];
    expect(
      gates([claim('old', { drifted: true }), joining], {
        nodes: [node('old', notReady), node('new', notReady)],
      }),
    ).toEqual([]);
  });
});

describe('PodRestarts', () => {
  it.each<[string, RolloutPod[], string[]]>([
    [
      'a pod restarted 3 times, more on average than on the old nodes',
      [
        pod('new', 'web', { restarts: 3 }),
        pod('new', 'api', { restarts: 1 }),
        pod('old', 'web-0', { restarts: 1 }),
        pod('old', 'api-0'),
      ],
      [
        'pod apps/web on Node aks-new restarted 3 times (limit 3); pods restart 2.00 times on average on up-to-date nodes, 0.50 on old nodes',
      ],
    ],
    ['below the limit', [pod('new', 'web', { restarts: 2 })], []],
    [
      'the old nodes restart as much',
      [pod('new', 'web', { restarts: 3 }), pod('old', 'web-0', { restarts: 4 })],
      [],
    ],
    [
      'no old node left: any crash loop counts',
      [pod('new', 'web', { restarts: 5 })],
      [
        'pod apps/web on Node aks-new restarted 5 times (limit 3); pods restart 5.00 times on average on up-to-date nodes, 0.00 on old nodes',
      ],
    ],
  ])('%s', (_, pods, messages) => {
    const failed = gates([old, fresh], { pods });
    expect(failed.map((f) => [f.gate, f.message])).toEqual(messages.map((m) => ['PodRestarts', m]));
  });

  it('the old nodes’ pods are read only when a replacement’s pod reaches the limit', () => {
    expect(oldPodsNeeded([pod('new', 'web', { restarts: 2 })], 3)).toBe(false);
    expect(oldPodsNeeded([pod('new', 'web', { restarts: 3 })], 3)).toBe(true);
    expect(oldPodsNeeded([pod('new', 'web', { restarts: 3, phase: 'Failed' })], 3)).toBe(false);
  });
});

describe('a resume', () => {
  it('judges only what happened since: earlier replacements and failures are accepted', () => {
    const resumedAt = new Date(STARTED.getTime() + 1800_000);
    const claims = [
      claim('old', { drifted: true, annotations: failedAt(new Date(STARTED.getTime() + 600_000)) }),
      claim('early', { initialized: false, createdAt: at(60) }),
    ];
    expect(gates(claims, { gatesFrom: resumedAt })).toEqual([]);
  });
});
