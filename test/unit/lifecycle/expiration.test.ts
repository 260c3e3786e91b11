// The expiration method on its own, against in-memory fakes, as Karpenter tests its expiration
// controller: a NodeClaim whose expireAfter has passed since its creation becomes a forceful command of
// its own (no replacement, no budget); one not yet expired, expiring Never, deleting, already marked by
// another method, or another provider's is left alone. Deciding writes nothing; the executor acts
// (test/unit/lifecycle/disruption-step.test.ts, test/e2e/).
import { beforeEach, describe, expect, test } from 'vitest';
import { expirationMethod } from '../../../shared/lifecycle/disruption/methods/expiration.js';
import { ConditionTypes, type NodeClaim } from '../../../shared/models/karpenter.js';
import { consolidatingPool } from '../../support/consolidation-fixtures.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { HOUR_AGO, initializedNodeClaim, methodPass } from '../../support/method-pass.js';

const pool = consolidatingPool('general');
const createdAgo = (ms: number) => new Date(FAKE_NOW.getTime() - ms).toISOString();

describe('expiration method', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
  });

  const commandsFor = (nodeClaims: NodeClaim[], allowed?: number) =>
    expirationMethod.computeCommands(
      methodPass(fake, orchestrations, { nodePool: pool, nodeClaims, allowed }),
    );
  const expiring = (name: string, expireAfter: string, age: number) =>
    initializedNodeClaim(name, pool, { creationTimestamp: createdAgo(age), spec: { expireAfter } });

  test('an expired NodeClaim is one forceful command of its own, with no replacement, whatever the budget', async () => {
    const commands = await commandsFor(
      [expiring('old', '1h', 3_600_000), expiring('older', '1h', 7_200_000)],
      0,
    );

    expect(commands).toEqual([
      {
        method: 'expiration',
        reason: 'Expired',
        nodePool: { name: 'general', uid: 'uid-general' },
        candidates: [{ name: 'old', uid: 'uid-old' }],
        replacements: [],
        detail: 'expireAfter 1h has passed since the NodeClaim was created',
        decidedAt: FAKE_NOW.toISOString(),
        validateAfterSeconds: 0,
        attempt: 0,
        consolidationType: '',
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
      },
      expect.objectContaining({ candidates: [{ name: 'older', uid: 'uid-older' }] }),
    ]);
  });

  test('leaves alone a NodeClaim not yet expired, or expiring Never', async () => {
    expect(
      await commandsFor([expiring('young', '1h', 3_599_999), expiring('forever', 'Never', 1e12)]),
    ).toEqual([]);
  });

  test('leaves alone a NodeClaim being deleted, marked by another method, or of another provider', async () => {
    const deleting = expiring('deleting', '1h', 7_200_000);
    deleting.metadata.deletionTimestamp = HOUR_AGO;
    const marked = initializedNodeClaim('marked', pool, {
      creationTimestamp: createdAgo(7_200_000),
      spec: { expireAfter: '1h' },
      conditions: [
        {
          type: ConditionTypes.disruptionReason,
          status: 'True',
          reason: 'Drifted',
          message: '',
          lastTransitionTime: HOUR_AGO,
        },
      ],
    });
    const foreign = expiring('foreign', '1h', 7_200_000);
    foreign.spec.nodeClassRef = { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' };

    expect(await commandsFor([deleting, marked, foreign])).toEqual([]);
  });

  test('deciding writes nothing, and deciding again decides the same', async () => {
    const nodeClaims = [expiring('old', '1h', 7_200_000)];

    const first = await commandsFor(nodeClaims);
    const second = await commandsFor(nodeClaims);

    expect(second).toEqual(first);
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodes.writes).toEqual([]);
    expect(fake.events).toEqual([]);
    expect(orchestrations.startCalls).toBe(0);
  });
});
