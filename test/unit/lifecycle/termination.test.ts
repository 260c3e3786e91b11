// Termination's start and its last step against in-memory fakes, as Karpenter tests its termination
// controller: a deleted NodeClaim holding karpenter.sh/termination starts one termination orchestration
// (a running one is left alone, a failed one replaced, a completed one only if the NodeClaim, read
// afresh, still holds the finalizer); once the VM is gone the NodeClaim's Node loses
// the finalizer and is deleted, and the NodeClaim's finalizer is removed so it goes. The VM step has
// vm-removal.test.ts, the drain drain.test.ts; the whole workflow runs in test/e2e/.
import { beforeEach, describe, expect, test } from 'vitest';
import {
  finishNodeClaimTermination,
  reconcileTermination,
  terminationInstanceId,
  type TerminationInput,
} from '../../../shared/lifecycle/termination/termination.js';
import { vmNameFor } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { WellKnown, type NodeClaim } from '../../../shared/models/karpenter.js';
import { TerminationNames } from '../../../shared/runtime/function-names.js';
import { fakeLifecycle, FakeOrchestrations, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { node, nodeClaim } from '../registration-fixtures.js';

const CLAIM = 'default-abcde';
const NODE = 'aks-default-abcde';
const input: TerminationInput = {
  nodeClaim: { name: CLAIM, uid: 'uid-nodeclaim-1' },
  vmName: vmNameFor(CLAIM),
  pollIntervalSeconds: 5,
  drainPollSeconds: 5,
};

/** The NodeClaim with the termination finalizer, deleted (deletionTimestamp set) unless `alive`. */
function finalized(options: { alive?: boolean } = {}): NodeClaim {
  const claim = nodeClaim(options.alive ? {} : { deletionTimestamp: '2026-11-30T11:00:00Z' });
  claim.metadata.finalizers = [WellKnown.terminationFinalizer];
  return claim;
}

describe('reconcileTermination', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
  });

  test('starts one termination orchestration for a deleted NodeClaim; a second call finds it running', async () => {
    const claim = fake.nodeClaims.seed(finalized());

    expect(await reconcileTermination(fake.deps, claim, { orchestrations })).toBe('started');
    expect(await reconcileTermination(fake.deps, claim, { orchestrations })).toBe('running');

    expect(orchestrations.started).toEqual([
      {
        name: TerminationNames.orchestrationV2,
        instanceId: terminationInstanceId('uid-nodeclaim-1'),
        input: expect.objectContaining({ nodeClaim: input.nodeClaim, vmName: input.vmName }),
      },
    ]);
  });

  test('a finished orchestration of the NodeClaim is purged and started again', async () => {
    const claim = fake.nodeClaims.seed(finalized());
    orchestrations.seed(terminationInstanceId('uid-nodeclaim-1'), TerminationNames.orchestration, 'Failed');

    expect(await reconcileTermination(fake.deps, claim, { orchestrations })).toBe('started');
    expect(orchestrations.purged).toEqual([terminationInstanceId('uid-nodeclaim-1')]);
  });

  test('a completed termination is not started again from a stale copy of its NodeClaim', async () => {
    // The termination completed: the finalizer is gone and so is the NodeClaim; the caller's copy (the
    // sweep's cache) still shows it deleting.
    const stale = finalized();
    orchestrations.seed(
      terminationInstanceId('uid-nodeclaim-1'),
      TerminationNames.orchestrationV2,
      'Completed',
    );

    expect(await reconcileTermination(fake.deps, stale, { orchestrations })).toBe('not-needed');
    expect(orchestrations.startCalls).toBe(0);
    expect(orchestrations.purged).toEqual([]);
  });

  test('a completed termination whose NodeClaim still holds the finalizer is started again', async () => {
    const claim = fake.nodeClaims.seed(finalized());
    orchestrations.seed(
      terminationInstanceId('uid-nodeclaim-1'),
      TerminationNames.orchestrationV2,
      'Completed',
    );

    expect(await reconcileTermination(fake.deps, claim, { orchestrations })).toBe('started');
    expect(orchestrations.purged).toEqual([terminationInstanceId('uid-nodeclaim-1')]);
  });

  test('a NodeClaim not deleted, without the finalizer, or of another provider needs none', async () => {
    const withoutFinalizer = { ...finalized(), metadata: { ...finalized().metadata, finalizers: [] } };
    const foreign = {
      ...finalized(),
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [],
      },
    };

    for (const claim of [finalized({ alive: true }), withoutFinalizer, foreign]) {
      expect(await reconcileTermination(fake.deps, claim, { orchestrations })).toBe('not-needed');
    }
    expect(orchestrations.startCalls).toBe(0);
  });
});

describe('finishNodeClaimTermination', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
  });

  test('releases and deletes the Node, then removes the NodeClaim’s finalizer so it goes', async () => {
    fake.nodeClaims.seed(finalized());
    fake.nodes.seed(node({ finalizers: [WellKnown.terminationFinalizer, 'someone-elses'] }));

    await finishNodeClaimTermination(fake.deps, input);

    // The Node keeps the finalizer that is not ours, so it stays, deleting, until its owner lets go.
    const stored = fake.nodes.peek(NODE);
    expect(stored?.metadata.finalizers).toEqual(['someone-elses']);
    expect(stored?.metadata.deletionTimestamp).toBeDefined();
    expect(fake.nodes.writes).toEqual([
      { verb: 'patch', name: NODE },
      { verb: 'delete', name: NODE },
    ]);
    expect(fake.nodeClaims.peek(CLAIM)).toBeUndefined();
  });

  test('a NodeClaim that never registered just loses its finalizer', async () => {
    fake.nodeClaims.seed(finalized());

    await finishNodeClaimTermination(fake.deps, input);

    expect(fake.nodes.writes).toEqual([]);
    expect(fake.nodeClaims.peek(CLAIM)).toBeUndefined();
  });

  test('a second call, or one for a NodeClaim replaced under the name, changes nothing', async () => {
    fake.nodeClaims.seed(finalized());
    fake.nodes.seed(node({ finalizers: [WellKnown.terminationFinalizer] }));
    await finishNodeClaimTermination(fake.deps, input);
    const writes = { nodes: fake.nodes.writes.length, nodeClaims: fake.nodeClaims.writes.length };

    await finishNodeClaimTermination(fake.deps, input);
    fake.nodeClaims.seed({ ...finalized(), metadata: { ...finalized().metadata, uid: 'uid-new' } });
    await finishNodeClaimTermination(fake.deps, input);

    expect(fake.nodes.writes).toHaveLength(writes.nodes);
    expect(fake.nodeClaims.writes).toHaveLength(writes.nodeClaims);
    expect(fake.nodeClaims.peek(CLAIM)?.metadata.finalizers).toEqual([WellKnown.terminationFinalizer]);
  });

  test('a Node already gone when its delete is sent (404) is no failure', async () => {
    fake.nodeClaims.seed(finalized());
    fake.nodes.seed(node({}));
    const deleteNode = fake.nodes.delete.bind(fake.nodes);
    fake.nodes.delete = async (name) => {
      await deleteNode(name);
      await deleteNode(name);
    };

    await finishNodeClaimTermination(fake.deps, input);

    expect(fake.nodeClaims.peek(CLAIM)).toBeUndefined();
  });
});
