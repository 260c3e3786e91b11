// Registration against in-memory fakes, as Karpenter tests its registration sub-reconciler: a launched
// NodeClaim's Node gets its labels, taints, finalizer and owner reference and loses
// karpenter.sh/unregistered in one guarded write, then the NodeClaim records Registered=True and
// status.nodeName and its bootstrap token goes; without its Node it says why. The bridge's path
// (registerNodeFromEvent) finds the NodeClaim from the Node. Against the real API server:
// test/integration/registration*.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { findCondition } from '../../../shared/decisions/conditions.js';
import { RegistrationReasons } from '../../../shared/decisions/registration.js';
import {
  reconcileRegistration,
  registerNodeFromEvent,
} from '../../../shared/lifecycle/node-join/registration.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../../shared/models/karpenter.js';
import type { Node } from '../../../shared/models/kube.js';
import { fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { condition, node, nodeClaim, PROVIDER_ID, UNREGISTERED } from '../registration-fixtures.js';

const registeredOf = (claim: NodeClaim | undefined) =>
  findCondition(claim?.status?.conditions, ConditionTypes.registered);

const LAUNCHED = [condition(ConditionTypes.launched, 'True')];

describe('reconcileRegistration', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
  });

  const seedClaim = (overrides: Parameters<typeof nodeClaim>[0] = {}) =>
    fake.nodeClaims.seed(
      nodeClaim({
        labels: { [WellKnown.nodePoolLabel]: 'default', team: 'a' },
        taints: [{ key: 'dedicated', value: 'a', effect: 'NoSchedule' }],
        conditions: LAUNCHED,
        ...overrides,
      }),
    );
  const seedNode = (overrides: Parameters<typeof node>[0] = {}): Node =>
    fake.nodes.seed(node({ taints: [UNREGISTERED], ...overrides }));

  test.each<[string, Parameters<typeof nodeClaim>[0]]>([
    ['has no providerID yet', { providerID: null }],
    ['is Registered already', { conditions: [...LAUNCHED, condition(ConditionTypes.registered, 'True')] }],
    ['is being deleted', { deletionTimestamp: '2026-11-30T11:00:00Z' }],
  ])('leaves a NodeClaim that %s alone', async (_name, overrides) => {
    const claim = seedClaim(overrides);
    seedNode();

    expect(
      (await reconcileRegistration(fake.deps, claim, [fake.nodes.peek('aks-default-abcde')!])).outcome,
    ).toBe('skipped');

    expect(fake.nodes.writes).toEqual([]);
    expect(fake.nodeClaims.writes).toEqual([]);
  });

  test('leaves a NodeClaim of another provider’s NodeClass alone', async () => {
    const claim = fake.nodeClaims.seed({
      ...nodeClaim({ conditions: LAUNCHED }),
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [],
      },
    });
    const found = seedNode();

    expect((await reconcileRegistration(fake.deps, claim, [found])).outcome).toBe('skipped');
    expect(fake.nodes.writes).toEqual([]);
  });

  test('syncs the Node, then records Registered=True and the node name, and deletes the bootstrap token', async () => {
    const claim = seedClaim();
    const found = seedNode({ labels: { 'kubernetes.io/hostname': 'aks-default-abcde' } });

    const result = await reconcileRegistration(fake.deps, claim, [found]);

    expect(result).toMatchObject({ outcome: 'registered', nodeName: 'aks-default-abcde', nodeWritten: true });
    expect(result.outcome === 'registered' && result.statusWritten).toBe(true);
    const stored = fake.nodes.peek('aks-default-abcde')!;
    expect(stored.spec.taints).toEqual([{ key: 'dedicated', value: 'a', effect: 'NoSchedule' }]);
    expect(stored.metadata.labels).toMatchObject({
      'kubernetes.io/hostname': 'aks-default-abcde',
      [WellKnown.nodePoolLabel]: 'default',
      team: 'a',
      [WellKnown.registeredLabel]: 'true',
    });
    expect(stored.metadata.finalizers).toEqual([WellKnown.terminationFinalizer]);
    expect(stored.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'NodeClaim', name: 'default-abcde', uid: 'uid-nodeclaim-1' }),
    ]);
    const storedClaim = fake.nodeClaims.peek('default-abcde');
    expect(storedClaim?.status?.nodeName).toBe('aks-default-abcde');
    expect(registeredOf(storedClaim)).toMatchObject({
      status: 'True',
      reason: RegistrationReasons.registered,
    });
    expect(fake.deletedBootstrapTokens).toEqual(['uid-nodeclaim-1']);
    expect(fake.events).toEqual([]);
  });

  test('writes the Node before the NodeClaim, so a crash between them leaves only the status to write', async () => {
    const claim = seedClaim();
    const found = seedNode();
    const order: string[] = [];
    fake.nodes.beforePatch = () =>
      order.push(`node (NodeClaim writes so far: ${fake.nodeClaims.writes.length})`);

    await reconcileRegistration(fake.deps, claim, [found]);

    expect(order).toEqual(['node (NodeClaim writes so far: 0)']);
    expect(fake.nodeClaims.writes).toEqual([{ verb: 'patchStatus', name: 'default-abcde' }]);
  });

  test('a second pass changes nothing more', async () => {
    const claim = seedClaim();
    await reconcileRegistration(fake.deps, claim, [seedNode()]);
    const nodeWrites = fake.nodes.writes.length;
    const claimWrites = fake.nodeClaims.writes.length;

    const again = await reconcileRegistration(fake.deps, fake.nodeClaims.peek('default-abcde')!, [
      fake.nodes.peek('aks-default-abcde')!,
    ]);
    // The sweep may still hand over a NodeClaim read before the first pass wrote its status.
    const stale = await reconcileRegistration(fake.deps, claim, [fake.nodes.peek('aks-default-abcde')!]);

    expect(again.outcome).toBe('skipped');
    expect(stale).toMatchObject({ outcome: 'registered', nodeWritten: false, statusWritten: false });
    expect(fake.nodes.writes).toHaveLength(nodeWrites);
    expect(fake.nodeClaims.writes).toHaveLength(claimWrites);
  });

  test('a Node changed meanwhile is read again and the change kept', async () => {
    const claim = seedClaim();
    const found = seedNode();
    fake.nodes.beforePatch = () => {
      fake.nodes.beforePatch = undefined;
      const current = fake.nodes.peek('aks-default-abcde')!;
      fake.nodes.seed({ ...current, metadata: { ...current.metadata, labels: { kubelet: 'wrote-this' } } });
    };

    const result = await reconcileRegistration(fake.deps, claim, [found]);

    expect(result).toMatchObject({ outcome: 'registered', nodeWritten: true });
    expect(fake.nodes.peek('aks-default-abcde')?.metadata.labels).toMatchObject({
      kubelet: 'wrote-this',
      team: 'a',
    });
    expect(fake.nodes.writes).toEqual([{ verb: 'patch', name: 'aks-default-abcde' }]);
  });

  test('warns when the Node joined without karpenter.sh/unregistered, and still registers it', async () => {
    const claim = seedClaim();
    const found = seedNode({ taints: [] });

    const result = await reconcileRegistration(fake.deps, claim, [found]);

    expect(result).toMatchObject({ outcome: 'registered', unregisteredTaintMissing: true });
    expect(fake.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: RegistrationReasons.unregisteredTaintMissing,
        target: expect.objectContaining({ kind: 'NodeClaim', name: 'default-abcde' }),
      }),
    ]);
  });

  test('without its Node, says so on the NodeClaim once and writes no Node', async () => {
    const claim = seedClaim();
    const other = fake.nodes.seed(node({ name: 'aks-other', providerID: `${PROVIDER_ID}-other` }));

    expect((await reconcileRegistration(fake.deps, claim, [other])).outcome).toBe('node-not-found');
    const writes = fake.nodeClaims.writes.length;
    await reconcileRegistration(fake.deps, fake.nodeClaims.peek('default-abcde')!, [other]);

    expect(registeredOf(fake.nodeClaims.peek('default-abcde'))).toMatchObject({
      status: 'Unknown',
      reason: RegistrationReasons.nodeNotFound,
    });
    expect(fake.nodeClaims.writes).toHaveLength(writes);
    expect(fake.nodes.writes).toEqual([]);
    expect(fake.deletedBootstrapTokens).toEqual([]);
  });

  test('with two Nodes of its providerID, registers neither and says MultipleNodesFound', async () => {
    const claim = seedClaim();
    const nodes = [
      seedNode(),
      fake.nodes.seed(node({ name: 'aks-default-abcde-2', taints: [UNREGISTERED] })),
    ];

    const result = await reconcileRegistration(fake.deps, claim, nodes);

    expect(result).toMatchObject({
      outcome: 'multiple-nodes',
      nodeNames: ['aks-default-abcde', 'aks-default-abcde-2'],
    });
    expect(registeredOf(fake.nodeClaims.peek('default-abcde'))?.reason).toBe(
      RegistrationReasons.multipleNodesFound,
    );
    expect(fake.nodes.writes).toEqual([]);
  });

  test('a NodeClaim replaced meanwhile by another of its name is reported gone, its status untouched', async () => {
    const claim = seedClaim();
    const found = seedNode();
    await fake.nodeClaims.delete('default-abcde');
    fake.nodeClaims.seed(nodeClaim({ uid: 'uid-nodeclaim-2', conditions: LAUNCHED }));

    expect(await reconcileRegistration(fake.deps, claim, [found])).toEqual({ outcome: 'nodeclaim-gone' });
    expect(registeredOf(fake.nodeClaims.peek('default-abcde'))).toBeUndefined();
    expect(fake.deletedBootstrapTokens).toEqual([]);
  });
});

describe('registerNodeFromEvent', () => {
  let fake: FakeLifecycle;
  // The event handler reads the Node once and hands it over.
  const nodeNamed = async (name: string) => {
    const found = await fake.deps.nodes.get(name);
    if (!found) throw new Error(`no Node ${name} in the fake`);
    return found;
  };
  beforeEach(() => {
    fake = fakeLifecycle();
  });

  test('registers the NodeClaim whose VM the Node is', async () => {
    fake.nodeClaims.seed(nodeClaim({ conditions: LAUNCHED }));
    fake.nodes.seed(node({ taints: [UNREGISTERED] }));

    expect(await registerNodeFromEvent(fake.deps, await nodeNamed('aks-default-abcde'))).toMatchObject({
      outcome: 'registered',
      nodeName: 'aks-default-abcde',
    });
    expect(registeredOf(fake.nodeClaims.peek('default-abcde'))?.status).toBe('True');
  });

  test('finds a NodeClaim whose name its VM name does not give back, by listing', async () => {
    const providerID = PROVIDER_ID.replace('aks-default-abcde', 'someone-elses-name');
    fake.nodeClaims.seed(nodeClaim({ providerID, conditions: LAUNCHED }));
    fake.nodes.seed(node({ name: 'someone-elses-name', providerID, taints: [UNREGISTERED] }));

    expect((await registerNodeFromEvent(fake.deps, await nodeNamed('someone-elses-name'))).outcome).toBe(
      'registered',
    );
  });

  test('ignores a Node without a providerID, or registered and initialized', async () => {
    fake.nodes.seed({
      ...node({ name: 'no-provider', taints: [UNREGISTERED] }),
      spec: { taints: [UNREGISTERED] },
    });
    fake.nodes.seed(
      node({
        name: 'done',
        labels: { [WellKnown.registeredLabel]: 'true', [WellKnown.initializedLabel]: 'true' },
      }),
    );

    expect((await registerNodeFromEvent(fake.deps, await nodeNamed('no-provider'))).outcome).toBe('ignored');
    expect((await registerNodeFromEvent(fake.deps, await nodeNamed('done'))).outcome).toBe('ignored');
    expect(fake.nodes.writes).toEqual([]);
  });

  test('reports a Node no NodeClaim claims', async () => {
    fake.nodes.seed(node({ taints: [UNREGISTERED] }));

    expect(await registerNodeFromEvent(fake.deps, await nodeNamed('aks-default-abcde'))).toEqual({
      outcome: 'no-nodeclaim',
      providerID: PROVIDER_ID,
    });
  });
});
