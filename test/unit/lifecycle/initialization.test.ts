// Initialization against in-memory fakes, as Karpenter tests its initialization sub-reconciler: a
// registered NodeClaim whose Node is Ready, free of startup and ephemeral taints and advertising its
// requested extended resources gets karpenter.sh/initialized=true on the Node, then Initialized=True;
// until then Initialized=Unknown says what it waits for, and no Node is written. The decision itself is
// tested in test/unit/initialization.test.ts; against the real API server in test/integration/.
import { beforeEach, describe, expect, test } from 'vitest';
import { findCondition } from '../../../shared/decisions/conditions.js';
import { InitializationReasons } from '../../../shared/decisions/initialization.js';
import { reconcileInitialization } from '../../../shared/lifecycle/node-join/initialization.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../../shared/models/karpenter.js';
import { fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { condition, node, nodeClaim } from '../registration-fixtures.js';

const initializedOf = (claim: NodeClaim | undefined) =>
  findCondition(claim?.status?.conditions, ConditionTypes.initialized);

const REGISTERED = [condition(ConditionTypes.launched, 'True'), condition(ConditionTypes.registered, 'True')];
const NODE = 'aks-default-abcde';
const CLAIM = 'default-abcde';

describe('reconcileInitialization', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
  });

  const seedClaim = (overrides: Parameters<typeof nodeClaim>[0] = {}) =>
    fake.nodeClaims.seed(nodeClaim({ conditions: REGISTERED, ...overrides }));
  const seedNode = (overrides: Parameters<typeof node>[0] = {}) =>
    fake.nodes.seed(node({ labels: { [WellKnown.registeredLabel]: 'true' }, ...overrides }));
  const run = (claim: NodeClaim) => reconcileInitialization(fake.deps, claim, [fake.nodes.peek(NODE)!]);

  test.each<[string, Parameters<typeof nodeClaim>[0]]>([
    ['is not Registered yet', { conditions: [condition(ConditionTypes.launched, 'True')] }],
    [
      'is Initialized already',
      { conditions: [...REGISTERED, condition(ConditionTypes.initialized, 'True')] },
    ],
    ['is being deleted', { deletionTimestamp: '2026-11-30T11:00:00Z' }],
  ])('leaves a NodeClaim that %s alone', async (_name, overrides) => {
    const claim = seedClaim(overrides);
    seedNode();

    expect((await run(claim)).outcome).toBe('skipped');
    expect(fake.nodes.writes).toEqual([]);
    expect(fake.nodeClaims.writes).toEqual([]);
  });

  test('labels the Node initialized, then records Initialized=True', async () => {
    const claim = seedClaim();
    seedNode();
    const order: number[] = [];
    fake.nodes.beforePatch = () => order.push(fake.nodeClaims.writes.length);

    expect(await run(claim)).toMatchObject({ outcome: 'initialized', statusWritten: true });

    expect(fake.nodes.peek(NODE)?.metadata.labels).toMatchObject({ [WellKnown.initializedLabel]: 'true' });
    expect(initializedOf(fake.nodeClaims.peek(CLAIM))).toMatchObject({
      status: 'True',
      reason: InitializationReasons.initialized,
    });
    // The label went first: no NodeClaim write had been made when the Node was patched.
    expect(order).toEqual([0]);
  });

  test('a second pass changes nothing more, even from a NodeClaim read before the first', async () => {
    const claim = seedClaim();
    seedNode();
    await run(claim);
    const writes = { nodes: fake.nodes.writes.length, nodeClaims: fake.nodeClaims.writes.length };

    expect((await run(fake.nodeClaims.peek(CLAIM)!)).outcome).toBe('skipped');
    expect(await run(claim)).toMatchObject({ outcome: 'initialized', statusWritten: false });

    expect(fake.nodes.writes).toHaveLength(writes.nodes);
    expect(fake.nodeClaims.writes).toHaveLength(writes.nodeClaims);
  });

  test.each([
    ['its Node is not Ready', {}, { ready: 'False' as const }, InitializationReasons.nodeNotReady],
    [
      'a startup taint is still on its Node',
      { startupTaints: [{ key: 'cilium/agent-not-ready', effect: 'NoSchedule' as const }] },
      { taints: [{ key: 'cilium/agent-not-ready', effect: 'NoSchedule' as const }] },
      InitializationReasons.startupTaintsExist,
    ],
    [
      'a known ephemeral taint is still on its Node',
      {},
      { taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' as const }] },
      InitializationReasons.knownEphemeralTaintsExist,
    ],
    [
      'its Node does not advertise a requested extended resource',
      { requests: { 'nvidia.com/gpu': '1' } },
      {},
      InitializationReasons.resourceNotRegistered,
    ],
  ])(
    'waits while %s, saying so once and writing no Node',
    async (_name, claimOverrides, nodeOverrides, reason) => {
      const claim = seedClaim(claimOverrides);
      seedNode(nodeOverrides);

      expect(await run(claim)).toMatchObject({ outcome: 'waiting', reason });
      const writes = fake.nodeClaims.writes.length;
      await run(fake.nodeClaims.peek(CLAIM)!);

      expect(initializedOf(fake.nodeClaims.peek(CLAIM))).toMatchObject({ status: 'Unknown', reason });
      expect(fake.nodeClaims.writes).toHaveLength(writes);
      expect(fake.nodes.writes).toEqual([]);
      expect(fake.nodes.peek(NODE)?.metadata.labels?.[WellKnown.initializedLabel]).toBeUndefined();
    },
  );

  test('a stale read that still waits never takes back an Initialized=True another writer made meanwhile', async () => {
    // Read while the Node still had its startup taint; the Node event's handler has since initialized it.
    const startupTaints = [{ key: 'cilium/agent-not-ready', effect: 'NoSchedule' as const }];
    const stale = seedClaim({ startupTaints });
    seedNode({ taints: startupTaints });
    fake.nodeClaims.seed(
      nodeClaim({
        startupTaints,
        conditions: [...REGISTERED, condition(ConditionTypes.initialized, 'True')],
      }),
    );

    const outcome = await run(stale);

    expect(outcome.outcome).toBe('skipped');
    expect(initializedOf(fake.nodeClaims.peek(CLAIM))?.status).toBe('True');
  });

  test('without its Node, waits with NodeNotFound', async () => {
    const claim = seedClaim();

    expect(await reconcileInitialization(fake.deps, claim, [])).toMatchObject({
      outcome: 'waiting',
      reason: InitializationReasons.nodeNotFound,
    });
    expect(fake.nodes.writes).toEqual([]);
  });

  test('a Node changed meanwhile is read again and labelled, the change kept', async () => {
    const claim = seedClaim();
    seedNode();
    const found = fake.nodes.peek(NODE)!;
    fake.nodes.seed({ ...found, metadata: { ...found.metadata, annotations: { kubelet: 'wrote-this' } } });

    expect(await reconcileInitialization(fake.deps, claim, [found])).toMatchObject({
      outcome: 'initialized',
    });

    const stored = fake.nodes.peek(NODE);
    expect(stored?.metadata.labels?.[WellKnown.initializedLabel]).toBe('true');
    expect(stored?.metadata.annotations).toEqual({ kubelet: 'wrote-this' });
  });
});
