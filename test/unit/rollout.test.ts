// The rollout's pure decisions (shared/decisions/rollout.ts), table by table: the target digest (what
// changes it and what does not), the policy and pause switches, the room the drift method gets in each
// phase, the canary's and the waves' sizes, the state machine's begin and poll steps (canary, wave done,
// soak, next wave, rolled out, gate failed → halted or rolled back, resume, superseded), the image
// rollback's rule, and which NodePools need their workflow running.
import { describe, expect, it } from 'vitest';
import {
  beginRollout,
  canarySize,
  driftCountsOf,
  parseRolloutCount,
  pollRollout,
  rolloutInstanceId,
  rolloutPolicyOf,
  rolloutRoom,
  rolloutStateOf,
  rolloutTargetOf,
  rolloutWorkflowWanted,
  RolloutAnnotations,
  serializeRolloutState,
  waveSize,
  withRolledBackVersion,
  type DriftCounts,
  type RolloutPollInput,
  type RolloutState,
  type RolloutStepInput,
} from '../../shared/decisions/rollout.js';
import {
  imageRollbackOf,
  nodeClaimsRunning,
} from '../../shared/cloudprovider/azure/decisions/image-rollback.js';
import type { AKSNodeClass } from '../../shared/models/aks-node-class.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../shared/models/karpenter.js';
import type { Node } from '../../shared/models/kube.js';

const NOW = new Date('2026-11-30T12:00:00Z');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const image = (version: string) =>
  `/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions/${version}`;

function pool(annotations: Record<string, string> = {}, requirements = 'amd64'): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', uid: 'pool-uid', annotations },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: [requirements] }],
        },
      },
    },
  };
}

function nodeClass(
  images: string[] = [image('202611.01.0')],
  osDiskSizeGB = 128,
  kubernetesVersion = '1.33.2',
): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default' },
    spec: { imageFamily: 'Ubuntu2204', osDiskSizeGB },
    status: { images: images.map((id) => ({ id, requirements: [] })), kubernetesVersion },
  };
}

function claim(
  name: string,
  options: { drifted?: string; imageID?: string; deleting?: boolean; marked?: boolean } = {},
): NodeClaim {
  const conditions = [
    ...(options.drifted
      ? [{ type: ConditionTypes.drifted, status: 'True' as const, reason: options.drifted, message: '' }]
      : []),
    ...(options.marked
      ? [{ type: ConditionTypes.disruptionReason, status: 'True' as const, reason: 'Drifted', message: '' }]
      : []),
  ];
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: { 'karpenter.sh/nodepool': 'general' },
      ...(options.deleting ? { deletionTimestamp: NOW.toISOString() } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      providerID: `azure:///vm/${name}`,
      conditions: conditions.map((c) => ({ ...c, lastTransitionTime: NOW.toISOString() })),
      ...(options.imageID ? { imageID: options.imageID } : {}),
    },
  };
}

const target = rolloutTargetOf(pool(), nodeClass());

function state(overrides: Partial<RolloutState> = {}): RolloutState {
  return {
    target: target.id,
    spec: target.spec,
    phase: 'canary',
    wave: 1,
    floor: 5,
    startedAt: NOW.toISOString(),
    gatesFrom: NOW.toISOString(),
    waveStartedAt: NOW.toISOString(),
    ...overrides,
  };
}

const withState = (s: RolloutState, annotations: Record<string, string> = {}) =>
  pool({ [RolloutAnnotations.state]: serializeRolloutState(s), ...annotations });

const counts = (drifted: number, disrupting = 0): DriftCounts => ({
  drifted,
  disrupting,
  notDisrupting: drifted - disrupting,
});

describe('the rollout target', () => {
  it('is a short digest, the same for the same spec and images, whatever their order or case', () => {
    expect(target.id).toMatch(/^[0-9a-f]{12}$/);
    expect(target.spec).toMatch(/^[0-9a-f]{12}$/);
    const images = [image('202611.01.0'), image('202611.01.0').replace('2204gen2', 'arm64')];
    expect(rolloutTargetOf(pool(), nodeClass(images))).toEqual(
      rolloutTargetOf(pool(), nodeClass([...images].reverse().map((i) => i.toUpperCase()))),
    );
  });

  it.each([
    ['an AKSNodeClass spec change', rolloutTargetOf(pool(), nodeClass(undefined, 256)), true],
    ['a requirement change', rolloutTargetOf(pool({}, 'arm64'), nodeClass()), true],
    ['a new effective image', rolloutTargetOf(pool(), nodeClass([image('202612.01.0')])), false],
    [
      'a new effective Kubernetes version',
      rolloutTargetOf(pool(), nodeClass(undefined, undefined, '1.34.0')),
      false,
    ],
    ['an annotation of the NodePool', rolloutTargetOf(pool({ x: 'y' }), nodeClass()), undefined],
  ])('%s changes it (spec part changed: %s)', (_, other, specChanged) => {
    if (specChanged === undefined) {
      expect(other).toEqual(target);
      return;
    }
    expect(other.id).not.toBe(target.id);
    expect(other.spec !== target.spec).toBe(specChanged);
  });

  it('names the workflow per NodePool and target', () => {
    expect(rolloutInstanceId('pool-uid', target.id)).toBe(`rollout-pool-uid-${target.id}`);
  });
});

describe('the state annotation', () => {
  it('round-trips, and an unreadable one is no state', () => {
    expect(rolloutStateOf(withState(state()))).toEqual(state());
    expect(rolloutStateOf(pool({ [RolloutAnnotations.state]: '{not json' }))).toBeUndefined();
    expect(rolloutStateOf(pool({ [RolloutAnnotations.state]: '{"target":"x"}' }))).toBeUndefined();
    expect(rolloutStateOf(pool())).toBeUndefined();
  });
});

describe('the policy', () => {
  it.each([
    [undefined, 'Canary', 'Canary'],
    [undefined, 'Immediate', 'Immediate'],
    ['Immediate', 'Canary', 'Immediate'],
    ['immediate', 'Canary', 'Immediate'],
    ['Canary', 'Immediate', 'Canary'],
    ['Slow', 'Immediate', 'Immediate'],
  ] as const)('annotation %s with setting %s: %s', (annotation, setting, expected) => {
    const p = pool(annotation === undefined ? {} : { [RolloutAnnotations.policy]: annotation });
    expect(rolloutPolicyOf(p, setting)).toBe(expected);
  });
});

describe('the room the drift method gets', () => {
  const INF = Number.POSITIVE_INFINITY;
  it.each<[string, NodePool, DriftCounts, number]>([
    ['no drifted node', pool(), counts(0), INF],
    ['drifted, no rollout of the target yet', pool(), counts(6), 0],
    [
      'drifted, a rollout of another target',
      withState(state({ target: 'other', spec: 'other' })),
      counts(6),
      0,
    ],
    ['canary of 1 from 6', withState(state({ floor: 5 })), counts(6), 1],
    ['canary in flight', withState(state({ floor: 5 })), counts(6, 1), 0],
    ['canary done', withState(state({ floor: 5 })), counts(5), 0],
    ['a wave of 2', withState(state({ phase: 'waves', wave: 2, floor: 3 })), counts(5), 2],
    ['a wave of 2, one in flight', withState(state({ phase: 'waves', wave: 2, floor: 3 })), counts(5, 1), 1],
    ['below the floor (consolidated away)', withState(state({ floor: 5 })), counts(4), 0],
    ['halted', withState(state({ phase: 'halted' })), counts(5), 0],
    // The class still has the rejected image: its drifted nodes are the old ones, which must stay.
    [
      'rollback, the class not fallen back yet: nothing',
      withState(state({ phase: 'rollback' })),
      counts(5),
      0,
    ],
    ['rolled out: the budget', withState(state({ phase: 'rolledOut' })), counts(5), INF],
    ['rolled back: the budget', withState(state({ phase: 'rolledBack' })), counts(5), INF],
    [
      'paused',
      withState(state({ phase: 'waves', floor: 0 }), { [RolloutAnnotations.paused]: 'true' }),
      counts(5),
      0,
    ],
    [
      'paused in a rollback',
      withState(state({ phase: 'rollback' }), { [RolloutAnnotations.paused]: 'True' }),
      counts(5),
      0,
    ],
    ['Immediate by annotation', pool({ [RolloutAnnotations.policy]: 'Immediate' }), counts(6), INF],
  ])('%s', (_, nodePool, driftCounts, room) => {
    expect(rolloutRoom({ nodePool, target, counts: driftCounts, defaultPolicy: 'Canary' })).toBe(room);
  });

  it('a rollback matches its spec while the class’s images move back under it', () => {
    const fallenBack = rolloutTargetOf(pool(), nodeClass([image('202610.01.0')]));
    const nodePool = withState(state({ phase: 'rollback' }));
    expect(rolloutRoom({ nodePool, target: fallenBack, counts: counts(2), defaultPolicy: 'Canary' })).toBe(
      Number.POSITIVE_INFINITY,
    );
    const canaryElsewhere = withState(state({ phase: 'canary', floor: 0 }));
    expect(
      rolloutRoom({
        nodePool: canaryElsewhere,
        target: fallenBack,
        counts: counts(2),
        defaultPolicy: 'Canary',
      }),
    ).toBe(0);
  });

  it('counts drifted nodes and those disrupting (deleting, marked, NotReady)', () => {
    const notReady: Node = {
      metadata: { name: 'aks-d' },
      spec: { providerID: 'azure:///vm/d' },
      status: { conditions: [{ type: 'Ready', status: 'False' }] },
    };
    const claims = [
      claim('a', { drifted: 'NodePoolDrifted' }),
      claim('b', { drifted: 'NodePoolDrifted', deleting: true }),
      claim('c', { drifted: 'NodePoolDrifted', marked: true }),
      claim('d', { drifted: 'NodePoolDrifted' }),
      claim('e'),
    ];
    expect(driftCountsOf(claims, (c) => (c.metadata.name === 'd' ? [notReady] : []))).toEqual(counts(4, 3));
  });
});

describe('sizes', () => {
  it.each([
    ['1', { count: 1 }],
    ['3', { count: 3 }],
    ['10%', { percent: 10 }],
    ['100%', { percent: 100 }],
    [' 25% ', { percent: 25 }],
    ['0', undefined],
    ['0%', undefined],
    ['101%', undefined],
    ['1.5', undefined],
    ['-1', undefined],
    ['ten', undefined],
  ])('ROLLOUT_CANARY=%j parses to %j', (text, parsed) => {
    expect(parseRolloutCount(text)).toEqual(parsed);
  });

  it.each([
    [{ count: 1 }, 6, 1],
    [{ count: 3 }, 2, 2],
    [{ percent: 10 }, 6, 1],
    [{ percent: 10 }, 25, 3],
    [{ percent: 50 }, 5, 3],
    [{ percent: 1 }, 1000, 10],
    [{ count: 1 }, 0, 0],
  ])('a canary of %j from %i drifted nodes is %i', (canary, drifted, size) => {
    expect(canarySize(canary, drifted)).toBe(size);
  });

  it.each([
    [2, 5, 2],
    [10, 5, 5],
    [0, 5, 1],
    [Number.POSITIVE_INFINITY, 5, 5],
    [2, 0, 0],
  ])('a wave with %s allowed from %i drifted nodes is %i', (allowed, drifted, size) => {
    expect(waveSize(allowed, drifted)).toBe(size);
  });
});

const stepInput = (overrides: Partial<RolloutStepInput> = {}): RolloutStepInput => ({
  requested: target.id,
  current: target,
  state: undefined,
  policy: 'Canary',
  paused: false,
  resume: undefined,
  counts: counts(6),
  allowed: 2,
  now: NOW,
  ...overrides,
});

describe('begin', () => {
  it('starts the canary: floor = drifted not disrupting − canary, RolloutStarted', () => {
    const decision = beginRollout({ ...stepInput(), canary: { count: 1 } });
    expect(decision.write).toEqual(state({ floor: 5 }));
    expect(decision.ended).toBeUndefined();
    expect(decision.waveStarted).toBe(true);
    expect(decision.events.map((e) => [e.type, e.reason])).toEqual([['Normal', 'RolloutStarted']]);
  });

  it('counts the canary from nodes not already disrupting', () => {
    const decision = beginRollout({ ...stepInput({ counts: counts(6, 2) }), canary: { percent: 50 } });
    expect(decision.write?.floor).toBe(2);
  });

  it.each<[string, Partial<RolloutStepInput>, string | undefined]>([
    ['Immediate', { policy: 'Immediate' }, 'immediate'],
    ['another target now', { current: { id: 'newer', spec: 'newer' } }, 'superseded'],
    ['nothing drifted', { counts: counts(0) }, 'nothing_drifted'],
    ['already in progress (a restart)', { state: state({ phase: 'waves', wave: 3 }) }, undefined],
    ['already rolled out', { state: state({ phase: 'rolledOut' }) }, 'rolled_out'],
    ['halted without a resume', { state: state({ phase: 'halted' }) }, 'halted'],
    ['halted, resume of another target', { state: state({ phase: 'halted' }), resume: 'other' }, 'halted'],
  ])('%s: writes nothing and ends %s', (_, overrides, outcome) => {
    const decision = beginRollout({ ...stepInput(overrides), canary: { count: 1 } });
    expect(decision.write).toBeUndefined();
    expect(decision.ended).toBe(outcome);
  });

  it('resumes a halted rollout with the next wave, judging gates from now, and consumes the annotation', () => {
    const halted = state({ phase: 'halted', wave: 2, floor: 3, gate: { name: 'PodNotReady', message: 'x' } });
    const decision = beginRollout({
      ...stepInput({ state: halted, resume: target.id, counts: counts(4), now: at(600) }),
      canary: { count: 1 },
    });
    expect(decision.write).toEqual({
      ...state({ phase: 'waves', wave: 3, floor: 2 }),
      gatesFrom: at(600).toISOString(),
      waveStartedAt: at(600).toISOString(),
    });
    expect(decision.consumeResume).toBe(true);
    expect(decision.events.map((e) => e.reason)).toEqual(['RolloutWaveStarted']);
  });
});

const pollInput = (overrides: Partial<RolloutPollInput> = {}): RolloutPollInput => ({
  ...stepInput(),
  state: state(),
  gates: [],
  imageRollback: undefined,
  runningRejected: 0,
  soakSeconds: 300,
  pollSeconds: 10,
  unwatchedSeconds: 0,
  ...overrides,
});

describe('poll', () => {
  it('waits while the wave runs: a drifted node disrupting, or more old nodes than the floor', () => {
    expect(pollRollout(pollInput({ counts: counts(6, 1) }))).toEqual({ events: [] });
    expect(pollRollout(pollInput({ counts: counts(6) }))).toEqual({ events: [] });
  });

  it('starts the soak when the wave is done, and waits it out', () => {
    const done = pollRollout(pollInput({ counts: counts(5) }));
    expect(done.write).toEqual(state({ soakingSince: NOW.toISOString() }));
    const soaking = state({ soakingSince: NOW.toISOString() });
    expect(pollRollout(pollInput({ state: soaking, counts: counts(5), now: at(299) }))).toEqual({
      events: [],
    });
  });

  it('a soak nobody watched for more than three polls (host down, API server away) counts again from now', () => {
    const soaking = state({ soakingSince: NOW.toISOString() });
    const unwatched = pollRollout(
      pollInput({ state: soaking, counts: counts(5), now: at(300), unwatchedSeconds: 31 }),
    );
    expect(unwatched.write).toEqual(state({ soakingSince: at(300).toISOString() }));
    expect(unwatched.soakRestarted).toBe(true);
    expect(unwatched.waveStarted).toBeUndefined();
    // Three polls missed is still a watched soak: the next wave starts.
    const watched = pollRollout(
      pollInput({ state: soaking, counts: counts(5), now: at(300), unwatchedSeconds: 30 }),
    );
    expect(watched.waveStarted).toBe(true);
  });

  it('after the soak, the next wave at the budget: floor = drifted − allowed', () => {
    const soaking = state({ soakingSince: NOW.toISOString() });
    const decision = pollRollout(pollInput({ state: soaking, counts: counts(5), now: at(300) }));
    expect(decision.write).toEqual({
      ...state({ phase: 'waves', wave: 2, floor: 3 }),
      waveStartedAt: at(300).toISOString(),
    });
    expect(decision.waveStarted).toBe(true);
    expect(decision.events.map((e) => e.reason)).toEqual(['RolloutWaveStarted']);
    expect(decision.events[0]?.message).toContain('wave 2, up to 2 of 5');
  });

  it('with no soak, goes on in the same poll', () => {
    const decision = pollRollout(pollInput({ counts: counts(5), soakSeconds: 0 }));
    expect(decision.write?.wave).toBe(2);
  });

  it('rolled out once no drifted node remains and the last wave soaked', () => {
    const last = state({ phase: 'waves', wave: 4, floor: 0, soakingSince: NOW.toISOString() });
    const decision = pollRollout(pollInput({ state: last, counts: counts(0), now: at(300) }));
    expect(decision.write).toEqual(state({ phase: 'rolledOut', wave: 4, floor: 0 }));
    expect(decision.ended).toBe('rolled_out');
    expect(decision.finished).toBe('rolled_out');
    expect(decision.events.map((e) => e.reason)).toEqual(['RolloutSucceeded']);
  });

  it('paused: no soak, no wave, no gate', () => {
    const gates = [{ gate: 'PodNotReady' as const, subject: 'p', message: 'pod p' }];
    expect(pollRollout(pollInput({ paused: true, counts: counts(5), gates }))).toEqual({ events: [] });
  });

  it('a failed gate halts a spec change: state, Warning, ended', () => {
    const gates = [
      { gate: 'PodNotReady' as const, subject: 'ns/a', message: 'pod ns/a not Ready' },
      { gate: 'PodRestarts' as const, subject: 'ns/b', message: 'pod ns/b restarted' },
    ];
    const decision = pollRollout(pollInput({ state: state({ soakingSince: NOW.toISOString() }), gates }));
    expect(decision.write).toEqual(
      state({
        phase: 'halted',
        gate: { name: 'PodNotReady,PodRestarts', message: 'pod ns/a not Ready; pod ns/b restarted' },
      }),
    );
    expect(decision.ended).toBe('halted');
    expect(decision.finished).toBe('halted');
    expect(decision.failedGates).toEqual(['PodNotReady', 'PodRestarts']);
    expect(decision.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'RolloutGateFailed']]);
  });

  it('a failed gate of an image version change rolls it back', () => {
    const gates = [{ gate: 'NodeUnhealthy' as const, subject: 'n', message: 'Node n NotReady' }];
    const decision = pollRollout(pollInput({ gates, imageRollback: { imageVersion: '202612.01.0' } }));
    expect(decision.write).toEqual(
      state({
        phase: 'rollback',
        gate: { name: 'NodeUnhealthy', message: 'Node n NotReady' },
        rejectedImageVersion: '202612.01.0',
      }),
    );
    expect(decision.rejectImageVersion).toEqual({
      imageVersion: '202612.01.0',
      reason: 'NodeUnhealthy: Node n NotReady',
    });
    expect(decision.ended).toBeUndefined();
    expect(decision.events.map((e) => e.reason)).toEqual(['RolloutGateFailed', 'RolloutRolledBack']);
  });

  it('a rollback waits until no node runs the version (asking for it again), then is rolled back', () => {
    const rollback = state({
      phase: 'rollback',
      rejectedImageVersion: '202612.01.0',
      gate: { name: 'NodeUnhealthy', message: 'x' },
    });
    const fallenBack = rolloutTargetOf(pool(), nodeClass([image('202611.01.0'), image('202610.01.0')]));
    const waiting = pollRollout(pollInput({ state: rollback, current: fallenBack, runningRejected: 1 }));
    expect(waiting.write).toBeUndefined();
    expect(waiting.rejectImageVersion?.imageVersion).toBe('202612.01.0');
    const done = pollRollout(pollInput({ state: rollback, current: fallenBack, runningRejected: 0 }));
    expect(done.write).toEqual({
      ...rollback,
      phase: 'rolledBack',
      target: fallenBack.id,
      spec: fallenBack.spec,
    });
    expect(done.ended).toBe('rolled_back');
    expect(done.finished).toBe('rolled_back');
  });

  it.each<[string, Partial<RolloutPollInput>, string]>([
    ['a newer target', { current: { id: 'newer', spec: 'newer' } }, 'superseded'],
    ['the state rewritten by a newer rollout', { state: state({ target: 'newer' }) }, 'superseded'],
    ['no state', { state: undefined }, 'superseded'],
    ['Immediate now', { policy: 'Immediate' }, 'immediate'],
    ['halted', { state: state({ phase: 'halted' }) }, 'halted'],
  ])('%s ends the workflow (%s) without a write', (_, overrides, outcome) => {
    const decision = pollRollout(pollInput(overrides));
    expect(decision.write).toBeUndefined();
    expect(decision.ended).toBe(outcome);
  });
});

describe('image rollback', () => {
  const newer = nodeClass([image('202612.01.0')]);
  it.each<[string, NodeClaim[], AKSNodeClass | undefined, { imageVersion: string } | undefined]>([
    [
      'every drifted node ImageDrift on another version',
      [
        claim('a', { drifted: 'ImageDrift', imageID: image('202611.01.0') }),
        claim('b', { imageID: image('202612.01.0') }),
      ],
      newer,
      { imageVersion: '202612.01.0' },
    ],
    [
      'a drifted node of another reason',
      [
        claim('a', { drifted: 'ImageDrift', imageID: image('202611.01.0') }),
        claim('b', { drifted: 'NodeClassDrifted', imageID: image('202611.01.0') }),
      ],
      newer,
      undefined,
    ],
    [
      'an old node already on the version',
      [claim('a', { drifted: 'ImageDrift', imageID: image('202612.01.0') })],
      newer,
      undefined,
    ],
    ['no drifted node', [claim('a', { imageID: image('202612.01.0') })], newer, undefined],
    [
      'no class',
      [claim('a', { drifted: 'ImageDrift', imageID: image('202611.01.0') })],
      undefined,
      undefined,
    ],
  ])('%s', (_, claims, cls, expected) => {
    expect(imageRollbackOf(claims, cls)).toEqual(expected);
  });

  it('counts the nodes running a version, by their image ID', () => {
    const claims = [
      claim('a', { imageID: image('202612.01.0') }),
      claim('b', { imageID: image('202611.01.0') }),
    ];
    expect(nodeClaimsRunning(claims, '202612.01.0')).toBe(1);
  });

  it('appends the rejected version once per NodePool', () => {
    const entry = { imageVersion: 'v2', reason: 'r', nodePool: 'general', timestamp: NOW.toISOString() };
    const old = { ...entry, imageVersion: 'v1' };
    expect(withRolledBackVersion([old], entry)).toEqual([old, entry]);
    expect(withRolledBackVersion([old, entry], { ...entry, reason: 'again' })).toBeUndefined();
    expect(withRolledBackVersion(undefined, entry)).toEqual([entry]);
  });
});

describe('which NodePools need their workflow running', () => {
  it.each<[string, NodePool, boolean, string | undefined]>([
    ['drifted, no rollout yet', pool(), true, target.id],
    ['nothing drifted, no rollout', pool(), false, undefined],
    ['a rollout of an older target', withState(state({ target: 'old', spec: 'old' })), true, target.id],
    ['in progress', withState(state({ phase: 'waves' })), true, target.id],
    ['rolled out', withState(state({ phase: 'rolledOut' })), false, undefined],
    ['halted', withState(state({ phase: 'halted' })), true, undefined],
    [
      'halted, resume asked',
      withState(state({ phase: 'halted' }), { [RolloutAnnotations.resume]: target.id }),
      true,
      target.id,
    ],
    ['Immediate', pool({ [RolloutAnnotations.policy]: 'Immediate' }), true, undefined],
  ])('%s', (_, nodePool, drifted, wanted) => {
    expect(rolloutWorkflowWanted(nodePool, target, drifted, 'Canary')).toBe(wanted);
  });

  it('a rollback runs under the target it rolled out', () => {
    const fallenBack = rolloutTargetOf(pool(), nodeClass([image('202610.01.0')]));
    const nodePool = withState(state({ phase: 'rollback', rejectedImageVersion: 'v' }));
    expect(rolloutWorkflowWanted(nodePool, fallenBack, true, 'Canary')).toBe(target.id);
  });
});
