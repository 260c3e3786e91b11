import { describe, expect, it } from 'vitest';
import {
  evaluateCandidate,
  selectEmpty,
  type CandidateContext,
  type CandidateVerdict,
  type ConsolidationNodeInput,
} from '../../shared/decisions/consolidation/candidates.js';
import { indexPdbs, type PdbLimit } from '../../shared/decisions/consolidation/pdb.js';
import { nextPodEvent, podEventNode, podSetDigest } from '../../shared/decisions/consolidation/pod-events.js';
import { isReschedulable, type ConsolidationPod } from '../../shared/decisions/consolidation/pods.js';
import { doNotDisruptOf } from '../../shared/decisions/do-not-disrupt.js';
import {
  consolidatableAt,
  consolidateAfterOf,
  expiresAt,
  isExpired,
  isUnderConsolidateAfter,
} from '../../shared/decisions/consolidation/timing.js';
import type { LabelSelectorRequirement } from '../../shared/decisions/scheduling/types.js';
import type { NodeClaim, NodePool } from '../../shared/models/index.js';
import type { Node } from '../../shared/models/kube.js';

const NOW = new Date('2026-03-10T12:00:00Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();

function pool(disruption: NodePool['spec']['disruption'] = { consolidateAfter: '30s' }): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general', uid: 'pool-uid' },
    spec: {
      disruption,
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [],
        },
      },
    },
  };
}

function nodeClaim(
  name: string,
  extra: { initializedAgo?: number; lastPodEventAgo?: number } = {},
): NodeClaim {
  const initializedAgo = extra.initializedAgo ?? 600;
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: { name, uid: `${name}-uid`, labels: { 'karpenter.sh/nodepool': 'general' } },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [],
    },
    status: {
      ...(extra.lastPodEventAgo !== undefined ? { lastPodEventTime: ago(extra.lastPodEventAgo) } : {}),
      conditions: [
        {
          type: 'Initialized',
          status: initializedAgo < 0 ? 'False' : 'True',
          reason: 'Initialized',
          message: '',
          lastTransitionTime: ago(Math.max(0, initializedAgo)),
        },
      ],
    },
  };
}

const node = (name: string, annotations: Record<string, string> = {}): Node => ({
  metadata: { name, annotations },
  spec: { providerID: `azure:///${name}` },
});

function pod(name: string, extra: Partial<ConsolidationPod> = {}): ConsolidationPod {
  return {
    namespace: 'apps',
    name,
    uid: `${name}-uid`,
    labels: { app: 'web' },
    phase: 'Running',
    ownerKinds: ['ReplicaSet'],
    annotations: {},
    tolerations: [],
    nodeName: 'n1',
    ready: true,
    startTime: ago(3600),
    scheduledAt: ago(3600),
    ...extra,
  };
}

const pdb = (name: string, disruptionsAllowed: number, extra: Partial<PdbLimit> = {}): PdbLimit => ({
  namespace: 'apps',
  name,
  selector: { matchLabels: { app: 'web' } },
  disruptionsAllowed,
  ...extra,
});

function input(extra: Partial<ConsolidationNodeInput> = {}): ConsolidationNodeInput {
  return { nodeClaim: nodeClaim('n1'), node: node('n1'), pods: [], disrupting: false, ...extra };
}

function context(
  extra: Partial<Omit<CandidateContext, 'pdbs'>> & { pdbs?: PdbLimit[] } = {},
): CandidateContext {
  return {
    nodePool: extra.nodePool ?? pool(),
    pdbs: indexPdbs(extra.pdbs ?? []),
    nominatedNodes: extra.nominatedNodes ?? new Set(),
    now: NOW,
  };
}

const summary = (v: CandidateVerdict) =>
  v.kind === 'candidate'
    ? `candidate ${v.empty ? 'empty' : `with ${v.reschedulable.length}`}`
    : v.kind === 'blocked'
      ? `blocked: ${v.message}`
      : v.kind === 'waiting'
        ? `waiting until ${v.until.toISOString()}`
        : `ineligible: ${v.why}`;

describe('consolidation candidates', () => {
  const cases: {
    name: string;
    input: ConsolidationNodeInput;
    context?: CandidateContext;
    expected: string;
  }[] = [
    { name: 'an idle initialized node past consolidateAfter', input: input(), expected: 'candidate empty' },
    {
      name: 'only DaemonSet, mirror, finished and terminating pods: still empty',
      input: input({
        pods: [
          pod('ds', { ownerKinds: ['DaemonSet'] }),
          pod('mirror', { ownerKinds: ['Node'], annotations: { 'kubernetes.io/config.mirror': 'x' } }),
          pod('done', { phase: 'Succeeded' }),
          pod('leaving', { deletionTimestamp: ago(-20) }),
        ],
      }),
      expected: 'candidate empty',
    },
    {
      name: 'a terminating StatefulSet pod still needs a home',
      input: input({ pods: [pod('db-0', { ownerKinds: ['StatefulSet'], deletionTimestamp: ago(-20) })] }),
      expected: 'candidate with 1',
    },
    { name: 'a running pod', input: input({ pods: [pod('web-1')] }), expected: 'candidate with 1' },
    {
      name: 'not initialized',
      input: input({ nodeClaim: nodeClaim('n1', { initializedAgo: -1 }) }),
      expected: 'ineligible: node is not initialized',
    },
    {
      name: 'no Node yet',
      input: { nodeClaim: nodeClaim('n1'), pods: [], disrupting: false },
      expected: 'ineligible: nodeclaim does not have an associated node',
    },
    {
      name: 'already disrupting',
      input: input({ disrupting: true }),
      expected: 'ineligible: node is deleting or marked for deletion',
    },
    {
      name: 'consolidateAfter not passed since the last pod event',
      input: input({ nodeClaim: nodeClaim('n1', { lastPodEventAgo: 10 }) }),
      expected: `waiting until ${ago(-20)}`,
    },
    {
      name: 'consolidateAfter counted from initialization without pod events',
      input: input({ nodeClaim: nodeClaim('n1', { initializedAgo: 5 }) }),
      expected: `waiting until ${ago(-25)}`,
    },
    {
      name: 'consolidateAfter Never disables it',
      input: input(),
      context: context({ nodePool: pool({ consolidateAfter: 'Never' }) }),
      expected: 'ineligible: node is not initialized',
    },
    {
      name: 'nominated for a pending pod',
      input: input(),
      context: context({ nominatedNodes: new Set(['n1']) }),
      expected: 'blocked: Node is nominated for a pending pod',
    },
    {
      name: 'do-not-disrupt on the Node',
      input: input({ node: node('n1', { 'karpenter.sh/do-not-disrupt': 'true' }) }),
      expected: 'blocked: Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation',
    },
    {
      name: 'do-not-disrupt on the NodeClaim',
      input: input({
        nodeClaim: {
          ...nodeClaim('n1'),
          metadata: { ...nodeClaim('n1').metadata, annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
        },
      }),
      expected: 'blocked: Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation',
    },
    {
      name: 'do-not-disrupt "true" on a pod',
      input: input({ pods: [pod('web-1', { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } })] }),
      expected: 'blocked: Pod apps/web-1 has "karpenter.sh/do-not-disrupt" annotation',
    },
    {
      name: 'do-not-disrupt on a DaemonSet pod blocks too, as upstream',
      input: input({
        pods: [
          pod('ds', { ownerKinds: ['DaemonSet'], annotations: { 'karpenter.sh/do-not-disrupt': 'true' } }),
        ],
      }),
      expected: 'blocked: Pod apps/ds has "karpenter.sh/do-not-disrupt" annotation',
    },
    {
      name: 'do-not-disrupt duration not yet passed since the pod started',
      input: input({
        pods: [pod('web-1', { startTime: ago(60), annotations: { 'karpenter.sh/do-not-disrupt': '5m' } })],
      }),
      expected: 'blocked: Pod apps/web-1 has "karpenter.sh/do-not-disrupt" annotation (5m)',
    },
    {
      name: 'do-not-disrupt duration passed',
      input: input({
        pods: [pod('web-1', { startTime: ago(600), annotations: { 'karpenter.sh/do-not-disrupt': '5m' } })],
      }),
      expected: 'candidate with 1',
    },
    {
      name: 'do-not-disrupt with an invalid value is ignored, as upstream',
      input: input({ pods: [pod('web-1', { annotations: { 'karpenter.sh/do-not-disrupt': 'please' } })] }),
      expected: 'candidate with 1',
    },
    ...(
      [
        // upstream designs/do-not-disrupt-grace-period.md and pkg/utils/pod/scheduling.go IsDoNotDisruptActive
        ['1h30m, started 1h ago', '1h30m', 3600, true],
        ['1.5h, started 2h ago', '1.5h', 7200, false],
        ['90s, started 89s ago', '90s', 89, true],
        ['90s, started exactly 90s ago (age < duration no longer holds)', '90s', 90, false],
        ['0s: not positive, ignored', '0s', 0, false],
        ['-5m: not positive, ignored', '-5m', 0, false],
        ['1d: no such Go unit, ignored', '1d', 0, false],
        ['2562048h: past 2^63-1 ns, ignored as Go refuses it', '2562048h', 0, false],
        ['"True": only "true" means for good', 'True', 0, false],
      ] as const
    ).map(([what, value, startedAgo, blocks]) => ({
      name: `do-not-disrupt ${what}`,
      input: input({
        pods: [
          pod('web-1', { startTime: ago(startedAgo), annotations: { 'karpenter.sh/do-not-disrupt': value } }),
        ],
      }),
      expected: blocks
        ? `blocked: Pod apps/web-1 has "karpenter.sh/do-not-disrupt" annotation (${value})`
        : 'candidate with 1',
    })),
    {
      name: 'do-not-disrupt duration on a pod that has not started: protected (upstream fails safe)',
      input: input({
        pods: [
          { ...pod('web-1', { annotations: { 'karpenter.sh/do-not-disrupt': '5m' } }), startTime: undefined },
        ],
      }),
      expected: 'blocked: Pod apps/web-1 has "karpenter.sh/do-not-disrupt" annotation (5m)',
    },
    {
      name: 'an invalid do-not-disrupt does not even protect a pod that has not started',
      input: input({
        pods: [
          { ...pod('web-1', { annotations: { 'karpenter.sh/do-not-disrupt': '0s' } }), startTime: undefined },
        ],
      }),
      expected: 'candidate with 1',
    },
    {
      name: 'a pod whose eviction cost clamps to 0 leaves the node empty, as upstream IsEmpty',
      input: input({
        pods: [
          pod('cheap', { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-2147483648' } }),
        ],
      }),
      expected: 'candidate empty',
    },
    {
      name: 'a pod of priority -2^25 costs 0 to evict: empty too',
      input: input({ pods: [pod('low', { priority: -(2 ** 25) })] }),
      expected: 'candidate empty',
    },
    {
      name: 'a pod of priority just above -2^25 still needs a home',
      input: input({ pods: [pod('low', { priority: -(2 ** 25) + 1 })] }),
      expected: 'candidate with 1',
    },
    {
      name: 'do-not-disrupt on a terminating pod protects nothing',
      input: input({
        pods: [
          pod('web-1', {
            deletionTimestamp: ago(-5),
            annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
          }),
        ],
      }),
      expected: 'candidate empty',
    },
    {
      name: 'a PDB that allows no eviction now',
      input: input({ pods: [pod('web-1')] }),
      context: context({ pdbs: [pdb('web', 0)] }),
      expected: 'blocked: Pdb prevents pod evictions (PodDisruptionBudget=apps/web, Pod=apps/web-1)',
    },
    {
      name: 'a PDB that allows an eviction',
      input: input({ pods: [pod('web-1')] }),
      context: context({ pdbs: [pdb('web', 1)] }),
      expected: 'candidate with 1',
    },
    {
      name: 'a pod covered by two PDBs',
      input: input({ pods: [pod('web-1')] }),
      context: context({ pdbs: [pdb('web', 1), pdb('all', 3, { selector: {} })] }),
      expected:
        'blocked: Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[apps/web apps/all], Pod=apps/web-1)',
    },
    {
      name: 'a blocking PDB in another namespace does not apply',
      input: input({ pods: [pod('web-1')] }),
      context: context({ pdbs: [pdb('web', 0, { namespace: 'other' })] }),
      expected: 'candidate with 1',
    },
    {
      name: 'a PDB with a null selector selects nothing',
      input: input({ pods: [pod('web-1')] }),
      context: context({ pdbs: [{ namespace: 'apps', name: 'none', disruptionsAllowed: 0 }] }),
      expected: 'candidate with 1',
    },
    {
      name: 'matchExpressions select the pod',
      input: input({ pods: [pod('web-1')] }),
      context: context({
        pdbs: [
          pdb('web', 0, {
            selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] },
          }),
        ],
      }),
      expected: 'blocked: Pdb prevents pod evictions (PodDisruptionBudget=apps/web, Pod=apps/web-1)',
    },
    ...(
      [
        ['NotIn another value', { key: 'app', operator: 'NotIn', values: ['api'] }, true],
        ['NotIn its value', { key: 'app', operator: 'NotIn', values: ['web'] }, false],
        ['Exists', { key: 'app', operator: 'Exists' }, true],
        ['DoesNotExist', { key: 'app', operator: 'DoesNotExist' }, false],
        ['DoesNotExist of a label it lacks', { key: 'tier', operator: 'DoesNotExist' }, true],
        ['In without the label', { key: 'tier', operator: 'In', values: ['web'] }, false],
      ] satisfies [string, LabelSelectorRequirement, boolean][]
    ).map(([what, expression, selects]) => ({
      name: `a blocking PDB whose selector is ${what} ${selects ? 'selects' : 'does not select'} the pod`,
      input: input({ pods: [pod('web-1')] }),
      context: context({
        pdbs: [
          pdb('web', 0, {
            selector: { matchLabels: { app: 'web' }, matchExpressions: [{ ...expression }] },
          }),
        ],
      }),
      expected: selects
        ? 'blocked: Pdb prevents pod evictions (PodDisruptionBudget=apps/web, Pod=apps/web-1)'
        : 'candidate with 1',
    })),
    {
      name: 'AlwaysAllow lets a not-Ready pod through a blocking PDB',
      input: input({ pods: [pod('web-1', { ready: false })] }),
      context: context({ pdbs: [pdb('web', 0, { unhealthyPodEvictionPolicy: 'AlwaysAllow' })] }),
      expected: 'candidate with 1',
    },
    {
      name: 'a blocking PDB does not hold a DaemonSet pod (drain leaves it)',
      input: input({ pods: [pod('ds', { ownerKinds: ['DaemonSet'] })] }),
      context: context({ pdbs: [pdb('web', 0)] }),
      expected: 'candidate empty',
    },
    {
      name: 'a pod tolerating the disrupted taint is not evicted, so its PDB does not block',
      input: input({ pods: [pod('tol', { tolerations: [{ operator: 'Exists' }] })] }),
      context: context({ pdbs: [pdb('web', 0)] }),
      expected: 'candidate with 1',
    },
  ];
  it.each(cases)('$name', ({ input: nodeInput, context: ctx, expected }) => {
    expect(summary(evaluateCandidate(nodeInput, ctx ?? context()))).toBe(expected);
  });
});

describe('do-not-disrupt, as upstream states it', () => {
  const annotated = (value: string, extra: Partial<ConsolidationPod> = {}) =>
    pod('job', { annotations: { 'karpenter.sh/do-not-disrupt': value }, startTime: ago(600), ...extra });
  it.each([
    ['absent', pod('job'), { kind: 'none' }],
    ['"true"', annotated('true'), { kind: 'always' }],
    [
      '15m, 10m after the start',
      annotated('15m'),
      { kind: 'until', value: '15m', until: new Date(ago(-300)) },
    ],
    ['5m, 10m after the start', annotated('5m'), { kind: 'elapsed', value: '5m', since: new Date(ago(300)) }],
    [
      'a word',
      annotated('please'),
      {
        kind: 'invalid',
        value: 'please',
        message: 'failed to parse "please" as a duration: time: invalid duration "please"',
      },
    ],
    ['zero', annotated('0s'), { kind: 'invalid', value: '0s', message: 'duration "0s" must be positive' }],
    ['on a finished pod', annotated('true', { phase: 'Succeeded' }), { kind: 'none' }],
  ] as const)('%s', (_what, subject, expected) => {
    expect(doNotDisruptOf(subject, NOW)).toEqual(expected);
  });
});

describe('selectEmpty', () => {
  const verdicts = (names: [string, number, boolean][]) =>
    names.map(([name, lastPodEventAgo, empty]) =>
      evaluateCandidate(
        input({
          nodeClaim: nodeClaim(name, { lastPodEventAgo }),
          node: node(name),
          pods: empty ? [] : [pod(`${name}-p`)],
        }),
        context(),
      ),
    );
  it('takes the empty candidates, longest consolidatable first, up to the budget', () => {
    const chosen = selectEmpty(
      verdicts([
        ['a', 100, true],
        ['b', 300, true],
        ['c', 500, false],
        ['d', 200, true],
      ]),
      2,
    );
    expect(chosen.map((c) => c.name)).toEqual(['b', 'd']);
  });
  it('takes none with a zero budget', () => {
    expect(selectEmpty(verdicts([['a', 100, true]]), 0)).toEqual([]);
  });
});

describe('timing', () => {
  // upstream pkg/utils/disruption/disruption.go IsUnderConsolidateAfter
  it.each([
    ['30s, a pod event 10s ago', '30s', { lastPodEventAgo: 10 }, true],
    ['30s, a pod event 40s ago', '30s', { lastPodEventAgo: 40 }, false],
    ['30s, no pod event, initialized 5s ago', '30s', { initializedAgo: 5 }, true],
    ['30s, not initialized', '30s', { initializedAgo: -1 }, false],
    ['0s never holds a node back', '0s', { lastPodEventAgo: 0 }, false],
    ['Never: a fine destination', 'Never', { lastPodEventAgo: 0 }, false],
  ] as const)('under consolidateAfter: %s → %s', (_what, consolidateAfter, claim, expected) => {
    expect(isUnderConsolidateAfter(nodeClaim('n', claim), pool({ consolidateAfter }), NOW)).toBe(expected);
  });

  it('consolidateAfter: default 0s, Never disables, durations parse', () => {
    expect(consolidateAfterOf(pool({}))).toEqual({ enabled: true, ms: 0 });
    expect(consolidateAfterOf(pool({ consolidateAfter: 'Never' })).enabled).toBe(false);
    expect(consolidateAfterOf(pool({ consolidateAfter: '1h5m' }))).toEqual({ enabled: true, ms: 3_900_000 });
    expect(consolidateAfterOf(pool({ consolidateAfter: 'soon' })).enabled).toBe(false);
  });
  it('consolidatableAt counts from the last pod event, else from initialization', () => {
    expect(
      consolidatableAt(nodeClaim('n', { lastPodEventAgo: 100, initializedAgo: 600 }), pool())?.toISOString(),
    ).toBe(ago(70));
    expect(consolidatableAt(nodeClaim('n', { initializedAgo: 600 }), pool())?.toISOString()).toBe(ago(570));
  });
  const claim = (created: string, expireAfter?: string, deleting = false): NodeClaim => ({
    ...nodeClaim('x'),
    metadata: { name: 'x', creationTimestamp: created, ...(deleting ? { deletionTimestamp: ago(1) } : {}) },
    spec: { ...nodeClaim('x').spec, ...(expireAfter !== undefined ? { expireAfter } : {}) },
  });
  it.each([
    { name: 'past expireAfter', nc: claim(ago(7200), '1h'), expired: true },
    { name: 'before expireAfter', nc: claim(ago(1800), '1h'), expired: false },
    { name: 'exactly at expireAfter', nc: claim(ago(3600), '1h'), expired: true },
    { name: 'Never', nc: claim(ago(10 ** 8), 'Never'), expired: false },
    { name: 'default 720h', nc: claim(ago(721 * 3600)), expired: true },
    { name: 'already deleting', nc: claim(ago(7200), '1h', true), expired: false },
    { name: 'invalid expireAfter never expires', nc: claim(ago(7200), 'tomorrow'), expired: false },
  ])('expiration: $name', ({ nc, expired }) => {
    expect(isExpired(nc, NOW)).toBe(expired);
  });
  it('expiresAt is creation + expireAfter', () => {
    expect(expiresAt(claim(ago(100), '30s'))?.toISOString()).toBe(ago(70));
  });
});

describe('pod events', () => {
  const web = pod('web-1', { scheduledAt: ago(50) });
  it('first look records the digest and the newest bind time', () => {
    const update = nextPodEvent({
      recordedDigest: undefined,
      lastPodEventTime: undefined,
      pods: [web, pod('web-2', { scheduledAt: ago(20) })],
      now: NOW,
    });
    expect(update).toMatchObject({ changed: true, lastPodEventTime: ago(20) });
  });
  it('first look at an idle node records no event time', () => {
    expect(
      nextPodEvent({ recordedDigest: undefined, lastPodEventTime: undefined, pods: [], now: NOW })
        .lastPodEventTime,
    ).toBeUndefined();
  });
  it('first look at a pod without a bind time takes the sweep time', () => {
    const unbound = pod('web-3', { scheduledAt: undefined });
    delete unbound.scheduledAt;
    expect(
      nextPodEvent({ recordedDigest: undefined, lastPodEventTime: undefined, pods: [unbound], now: NOW })
        .lastPodEventTime,
    ).toBe(NOW.toISOString());
  });
  it('an unchanged pod set is no event', () => {
    const digest = podSetDigest([web]);
    expect(
      nextPodEvent({ recordedDigest: digest, lastPodEventTime: ago(50), pods: [web], now: NOW }),
    ).toEqual({
      digest,
      lastPodEventTime: ago(50),
      changed: false,
    });
  });
  it('a pod that left is an event at the sweep time', () => {
    const digest = podSetDigest([web, pod('web-2')]);
    expect(
      nextPodEvent({ recordedDigest: digest, lastPodEventTime: ago(50), pods: [web], now: NOW }),
    ).toMatchObject({
      changed: true,
      lastPodEventTime: NOW.toISOString(),
    });
  });
  it('a pod that starts terminating or finishes changes the digest; a DaemonSet pod does not', () => {
    const base = podSetDigest([web]);
    expect(podSetDigest([{ ...web, deletionTimestamp: ago(-30) }])).not.toBe(base);
    expect(podSetDigest([{ ...web, phase: 'Succeeded' }])).not.toBe(base);
    expect(podSetDigest([web, pod('ds', { ownerKinds: ['DaemonSet'] })])).toBe(base);
  });
  it('a pod event the watch saw counts even when the pod set looks unchanged (a pod came and went)', () => {
    const digest = podSetDigest([]);
    expect(
      nextPodEvent({
        recordedDigest: digest,
        lastPodEventTime: undefined,
        pods: [],
        observedEventAt: Date.parse(ago(5)),
        now: NOW,
      }),
    ).toEqual({ digest, lastPodEventTime: ago(5), changed: true });
  });
  it('the newest of the watch and the digest wins; an older watch time changes nothing', () => {
    const digest = podSetDigest([web, pod('web-2')]);
    const departed = { recordedDigest: digest, lastPodEventTime: ago(50), pods: [web], now: NOW };
    expect(nextPodEvent({ ...departed, observedEventAt: Date.parse(ago(10)) }).lastPodEventTime).toBe(
      NOW.toISOString(),
    );
    const same = podSetDigest([web]);
    expect(
      nextPodEvent({
        recordedDigest: same,
        lastPodEventTime: ago(50),
        pods: [web],
        observedEventAt: Date.parse(ago(60)),
        now: NOW,
      }),
    ).toEqual({ digest: same, lastPodEventTime: ago(50), changed: false });
  });
  it('podEventNode: binding, going terminal, starting to terminate, forced removal; not DaemonSet pods', () => {
    const pending = pod('p', { nodeName: undefined });
    delete pending.nodeName;
    const running = pod('p');
    expect(podEventNode(pending, running)).toBe('n1');
    expect(podEventNode(undefined, running)).toBe('n1');
    expect(podEventNode(undefined, pending)).toBeUndefined();
    expect(podEventNode(running, { ...running, ready: false })).toBeUndefined();
    expect(podEventNode(running, { ...running, phase: 'Succeeded' })).toBe('n1');
    const terminating = { ...running, deletionTimestamp: ago(0) };
    expect(podEventNode(running, terminating)).toBe('n1');
    expect(podEventNode(terminating, { ...terminating, ready: false })).toBeUndefined();
    expect(podEventNode(terminating, undefined)).toBeUndefined();
    expect(podEventNode(running, undefined)).toBe('n1');
    expect(podEventNode(pending, undefined)).toBeUndefined();
    const daemon = pod('ds', { ownerKinds: ['DaemonSet'] });
    expect(podEventNode(undefined, daemon)).toBeUndefined();
    expect(podEventNode(daemon, undefined)).toBeUndefined();
  });
  it('isReschedulable', () => {
    expect(isReschedulable(web)).toBe(true);
    expect(isReschedulable(pod('ds', { ownerKinds: ['DaemonSet'] }))).toBe(false);
  });
});
