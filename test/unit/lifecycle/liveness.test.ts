// Liveness against in-memory fakes, as Karpenter tests its liveness sub-reconciler: a launched NodeClaim
// whose Node has not registered within the registration timeout gets Registered=False with the reason
// and a Warning event, is deleted, and its termination starts at once; one still within the timeout, or
// registered, is left alone with when to look again. The decision itself is tested in
// test/unit/liveness.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { findCondition } from '../../../shared/decisions/conditions.js';
import { REGISTRATION_TIMEOUT_REASON } from '../../../shared/decisions/liveness.js';
import { reconcileLiveness, registrationTimeoutMs } from '../../../shared/lifecycle/node-join/liveness.js';
import { terminationInstanceId } from '../../../shared/lifecycle/termination/termination.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../../shared/models/karpenter.js';
import { TerminationNames } from '../../../shared/runtime/function-names.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { condition, nodeClaim } from '../registration-fixtures.js';

const CLAIM = 'default-abcde';
const registeredOf = (claim: NodeClaim | undefined) =>
  findCondition(claim?.status?.conditions, ConditionTypes.registered);

describe('reconcileLiveness', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  let timeoutMs: number;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    timeoutMs = registrationTimeoutMs(fake.deps);
  });

  /** A NodeClaim launched `ago` ms before now, carrying the termination finalizer. */
  const launchedAgo = (ago: number, extra: Parameters<typeof nodeClaim>[0]['conditions'] = []) => {
    const launchedAt = new Date(FAKE_NOW.getTime() - ago).toISOString();
    const claim = nodeClaim({
      conditions: [
        condition(ConditionTypes.launched, 'True', 'Launched', launchedAt),
        condition(ConditionTypes.registered, 'Unknown', 'NodeNotFound', launchedAt),
        ...extra,
      ],
    });
    claim.metadata.finalizers = [WellKnown.terminationFinalizer];
    return fake.nodeClaims.seed(claim);
  };
  const run = (claim: NodeClaim) => reconcileLiveness(fake.deps, claim, { orchestrations });

  test('leaves a NodeClaim within the timeout alone, saying when to look again', async () => {
    const claim = launchedAgo(timeoutMs - 1);

    expect(await run(claim)).toEqual({ outcome: 'alive', nextCheckAt: new Date(FAKE_NOW.getTime() + 1) });
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
    expect(orchestrations.started).toEqual([]);
  });

  test('leaves a registered NodeClaim, and another provider’s, alone however old', async () => {
    const registered = launchedAgo(10 * timeoutMs);
    registered.status!.conditions = [condition(ConditionTypes.registered, 'True')];
    const foreign = {
      ...launchedAgo(10 * timeoutMs),
      spec: {
        nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
        requirements: [],
      },
    };

    expect(await run(registered)).toEqual({ outcome: 'alive' });
    expect(await run(foreign)).toEqual({ outcome: 'alive' });
    expect(fake.nodeClaims.writes).toEqual([]);
  });

  test('past the timeout: says why on the NodeClaim and in a Warning, deletes it and starts its termination', async () => {
    const claim = launchedAgo(timeoutMs);

    const result = await run(claim);

    expect(result).toMatchObject({ outcome: 'deleted' });
    const stored = fake.nodeClaims.peek(CLAIM);
    expect(registeredOf(stored)).toMatchObject({ status: 'False', reason: REGISTRATION_TIMEOUT_REASON });
    expect(stored?.metadata.deletionTimestamp).toBeDefined();
    expect(fake.nodeClaims.writes.map((w) => w.verb)).toEqual(['patchStatus', 'delete']);
    expect(fake.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: REGISTRATION_TIMEOUT_REASON,
        target: expect.objectContaining({ name: CLAIM, uid: 'uid-nodeclaim-1' }),
      }),
    ]);
    expect(orchestrations.started).toEqual([
      expect.objectContaining({
        name: TerminationNames.orchestrationV2,
        instanceId: terminationInstanceId('uid-nodeclaim-1'),
      }),
    ]);
  });

  test('a second pass changes nothing more', async () => {
    await run(launchedAgo(timeoutMs));
    const writes = fake.nodeClaims.writes.length;

    expect(await run(fake.nodeClaims.peek(CLAIM)!)).toEqual({ outcome: 'alive' });

    expect(fake.nodeClaims.writes).toHaveLength(writes);
    expect(fake.events).toHaveLength(1);
    expect(orchestrations.startCalls).toBe(1);
  });

  test('a Node that registered since the NodeClaim was read wins: nothing is written or deleted', async () => {
    const stale = launchedAgo(timeoutMs);
    await fake.nodeClaims.mergePatchStatus(CLAIM, {
      status: { conditions: [condition(ConditionTypes.registered, 'True')] },
    });
    const writes = fake.nodeClaims.writes.length;

    expect(await run(stale)).toEqual({ outcome: 'alive' });

    expect(fake.nodeClaims.peek(CLAIM)?.metadata.deletionTimestamp).toBeUndefined();
    expect(fake.nodeClaims.writes).toHaveLength(writes);
    expect(fake.events).toEqual([]);
  });
});
