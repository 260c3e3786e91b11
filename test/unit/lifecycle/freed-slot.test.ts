// The run a NodeClaim's deletion starts (bridge-events/freed-slot.ts) fills the budget slot the deletion
// freed even while the process's watch-fed cache still holds the deleted NodeClaim: its pass reads the
// NodePool's objects fresh. From the cache as it was, the pass counted the gone NodeClaim's mark in the
// budget, started nothing, and the slot waited for the next sweep.
import { beforeEach, expect, test } from 'vitest';
import { disruptAfterDeletion } from '../../../shared/lifecycle/bridge-events/freed-slot.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../../shared/models/karpenter.js';
import { silentLogger } from '../../../shared/observability/logger.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { driftedNodeClaim } from '../../support/method-pass.js';

const nodeClassRef = { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' };

/** One node at a time may be disrupted. */
const pool: NodePool = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodePool',
  metadata: { name: 'general', uid: 'pool-uid' },
  spec: {
    template: { spec: { nodeClassRef, requirements: [] } },
    disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '1' }] },
  },
  status: { conditions: [] },
};

function markedDrifted(name: string): NodeClaim {
  const claim = driftedNodeClaim(name, pool, 60);
  const mark = {
    type: ConditionTypes.disruptionReason,
    status: 'True' as const,
    reason: 'Drifted',
    message: 'drifted',
    // Marked a moment ago: its workflow may still be starting, so the pass leaves the mark alone.
    lastTransitionTime: new Date(FAKE_NOW.getTime() - 1_000).toISOString(),
  };
  return { ...claim, status: { ...claim.status, conditions: [...(claim.status?.conditions ?? []), mark] } };
}

let fake: FakeLifecycle;
let orchestrations: FakeOrchestrations;
beforeEach(() => {
  fake = fakeLifecycle();
  fake.deps.settings = {
    ...fake.deps.settings,
    rollout: { ...fake.deps.settings.rollout, policy: 'Immediate' },
  };
  orchestrations = new FakeOrchestrations();
});

test('the pass a deletion starts marks the next drifted node though the cache still holds the deleted one', async () => {
  // general-a held the one slot and is gone from the API server; general-b waits for the slot.
  const gone = markedDrifted('general-a');
  const waiting = fake.nodeClaims.seed(driftedNodeClaim('general-b', pool, 60));
  fake.nodePools.seed(pool);
  // The watch-fed cache has not seen the deletion yet.
  fake.deps.cluster = {
    ...fake.deps.cluster,
    read: async () => ({ nodeClaims: [gone, waiting], nodes: [], nodePools: [pool], nodeClasses: [] }),
  };

  const outcome = await disruptAfterDeletion(fake.deps, { orchestrations, log: silentLogger }, 'general');

  expect(outcome.ran).toBe(true);
  expect(orchestrations.started.map((s) => s.instanceId)).toEqual(['replace-uid-general-b']);
});
