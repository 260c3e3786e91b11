// The drift fan-out step's recovery of replacements in flight, against in-memory fakes: a NodeClaim
// marked for a drift replacement whose orchestration is missing gets it started again, and one whose
// orchestration ended without unmarking it is put back in service. The replacement's own run is tested
// end to end in test/e2e/drift-replacement.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { findCondition } from '../../../shared/decisions/conditions.js';
import { fanOutStep } from '../../../shared/lifecycle/disruption/fan-out-step.js';
import {
  replacementInstanceId,
  type ReplacementInput,
} from '../../../shared/lifecycle/disruption/replacement.js';
import {
  ConditionTypes,
  WellKnown,
  type NodeClaim,
  type NodePool,
} from '../../../shared/models/karpenter.js';
import { ReplacementNames } from '../../../shared/runtime/function-names.js';
import {
  fakeLifecycle,
  fakeSweepContext,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';

const nodeClassRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };

const pool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general', uid: 'pool-uid' },
  spec: {
    template: { spec: { nodeClassRef, requirements: [] } },
    disruption: { budgets: [{ nodes: '100%' }] },
  },
  status: { conditions: [] },
};

/** A launched NodeClaim of `pool` that is marked for a drift replacement. */
function markedForDrift(name: string): NodeClaim {
  const since = '2026-11-30T11:00:00Z';
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      uid: `uid-${name}`,
      labels: { [WellKnown.nodePoolLabel]: pool.metadata.name },
      finalizers: [WellKnown.terminationFinalizer],
    },
    spec: { nodeClassRef, requirements: [] },
    status: {
      conditions: [
        {
          type: ConditionTypes.drifted,
          status: 'True',
          reason: 'NodeClassDrifted',
          message: 'imageFamily',
          lastTransitionTime: since,
        },
        {
          type: ConditionTypes.disruptionReason,
          status: 'True',
          reason: 'Drifted',
          message: 'drifted',
          lastTransitionTime: since,
        },
      ],
    },
  };
}

describe('drift fan-out: replacements in flight', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    fake.nodePools.seed(pool);
  });

  test('a marked NodeClaim whose replacement orchestration is missing gets it started again', async () => {
    const old = fake.nodeClaims.seed(markedForDrift('general-a'));

    await fanOutStep.run(fakeSweepContext(fake, orchestrations, { nodeClaims: [old], nodePools: [pool] }));

    expect(orchestrations.started).toHaveLength(1);
    const [started] = orchestrations.started;
    expect(started?.name).toBe(ReplacementNames.orchestration);
    expect(started?.instanceId).toBe(replacementInstanceId('uid-general-a'));
    const input = started?.input as ReplacementInput;
    expect(input.old).toEqual({ name: 'general-a', uid: 'uid-general-a', nodePool: 'general' });
    expect(input.reason).toBe('Drifted');
    // Still marked, and nothing else written to it: the restarted orchestration carries on from here.
    expect(fake.nodeClaims.writes.filter((w) => w.name === 'general-a')).toEqual([]);
  });

  test('a marked NodeClaim whose replacement is still running is left alone', async () => {
    const old = fake.nodeClaims.seed(markedForDrift('general-a'));
    orchestrations.seed(replacementInstanceId('uid-general-a'), ReplacementNames.orchestration, 'Running');

    await fanOutStep.run(fakeSweepContext(fake, orchestrations, { nodeClaims: [old], nodePools: [pool] }));

    expect(orchestrations.started).toEqual([]);
    expect(orchestrations.purged).toEqual([]);
    expect(fake.nodeClaims.writes).toEqual([]);
  });

  test('a marked NodeClaim whose replacement ended without unmarking it is put back in service', async () => {
    const old = fake.nodeClaims.seed(markedForDrift('general-a'));
    const instanceId = replacementInstanceId('uid-general-a');
    orchestrations.seed(instanceId, ReplacementNames.orchestration, 'Failed');

    await fanOutStep.run(fakeSweepContext(fake, orchestrations, { nodeClaims: [old], nodePools: [pool] }));

    const released = fake.nodeClaims.peek('general-a');
    expect(findCondition(released?.status?.conditions, ConditionTypes.disruptionReason)).toBeUndefined();
    expect(released?.metadata.annotations?.['karpenter.azure.com/replacement-attempts']).toBe('1');
    expect(released?.metadata.annotations?.['karpenter.azure.com/replacement-backoff-until']).toBeDefined();
    expect(fake.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'DisruptionReplacementFailed',
        message: expect.stringContaining('the replacement orchestration ended Failed'),
      }),
    ]);
    expect(orchestrations.purged).toEqual([instanceId]);
    // Backed off: the same sweep does not start it again.
    expect(orchestrations.started).toEqual([]);
  });

  test('a deleting NodeClaim gets no new replacement; its finished instance is purged', async () => {
    const old = fake.nodeClaims.seed({
      ...markedForDrift('general-a'),
      metadata: { ...markedForDrift('general-a').metadata, deletionTimestamp: '2026-11-30T11:30:00Z' },
    });
    const instanceId = replacementInstanceId('uid-general-a');
    orchestrations.seed(instanceId, ReplacementNames.orchestration, 'Completed');

    await fanOutStep.run(fakeSweepContext(fake, orchestrations, { nodeClaims: [old], nodePools: [pool] }));

    expect(orchestrations.purged).toEqual([instanceId]);
    expect(orchestrations.started).toEqual([]);
    expect(fake.events).toEqual([]);
  });
});
