// The run a NodeClaim's deletion starts (bridge-events/freed-slot.ts) fills the budget slot the deletion
// freed even while the process's watch-fed cache still holds the deleted NodeClaim: its pass reads the
// NodePool's objects fresh. From the cache as it was, the pass counted the gone NodeClaim's mark in the
// budget, started nothing, and the slot waited for the next sweep.
import { beforeEach, expect, test } from 'vitest';
import { disruptAfterDeletion } from '../../../shared/lifecycle/bridge-events/freed-slot.js';
import { silentLogger } from '../../../shared/observability/logger.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  immediateRollouts,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { driftedNodeClaim, markedForDisruption, poolWithBudget } from '../../support/method-pass.js';

/** One node at a time may be disrupted. */
const pool = poolWithBudget('1');

let fake: FakeLifecycle;
let orchestrations: FakeOrchestrations;
beforeEach(() => {
  fake = fakeLifecycle();
  immediateRollouts(fake);
  orchestrations = new FakeOrchestrations();
});

test('the pass a deletion starts marks the next drifted node though the cache still holds the deleted one', async () => {
  // general-a held the one slot and is gone from the API server; general-b waits for the slot.
  // Marked a moment ago: its workflow may still be starting, so the pass leaves the mark alone.
  const gone = markedForDisruption(
    driftedNodeClaim('general-a', pool, 60),
    'Drifted',
    new Date(FAKE_NOW.getTime() - 1_000).toISOString(),
  );
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
