// The static-drift method on its own, against in-memory fakes, as Karpenter tests StaticDrift: a static
// NodePool's (spec.replicas) drifted NodeClaim is replaced one command each, a replacement first so the
// replica count holds, within the Drifted budget; dynamic NodePools are the drift method's
// (drift.test.ts). Deciding writes nothing.
import { beforeEach, describe, expect, test } from 'vitest';
import { staticDriftMethod } from '../../../shared/lifecycle/disruption/methods/drift.js';
import type { NodePool } from '../../../shared/models/karpenter.js';
import { consolidatingPool } from '../../support/consolidation-fixtures.js';
import {
  fakeLifecycle,
  FakeOrchestrations,
  immediateRollouts,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { driftedNodeClaim, initializedNodeClaim, methodPass } from '../../support/method-pass.js';

const dynamicPool = consolidatingPool('general');
const staticPool: NodePool = { ...dynamicPool, spec: { ...dynamicPool.spec, replicas: 3 } };

describe('static-drift method', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    immediateRollouts(fake);
    orchestrations = new FakeOrchestrations();
  });

  test('decides for static NodePools only', () => {
    expect(staticDriftMethod.appliesTo(staticPool)).toBe(true);
    expect(staticDriftMethod.appliesTo(dynamicPool)).toBe(false);
  });

  test('each drifted NodeClaim of a static NodePool is a command of its own with a replacement, within the budget, decided alike twice', async () => {
    const nodeClaims = [
      driftedNodeClaim('newer', staticPool, 5),
      driftedNodeClaim('older', staticPool, 50),
      initializedNodeClaim('current', staticPool),
    ];

    const commands = await staticDriftMethod.computeCommands(
      methodPass(fake, orchestrations, { nodePool: staticPool, nodeClaims, allowed: 1 }),
    );

    expect(commands).toEqual([
      expect.objectContaining({
        method: 'static-drift',
        reason: 'Drifted',
        candidates: [{ name: 'older', uid: 'uid-older' }],
        replacements: [{}],
        detail: 'NodeClassDrifted: imageFamily',
      }),
    ]);
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
    const again = await staticDriftMethod.computeCommands(
      methodPass(fake, orchestrations, { nodePool: staticPool, nodeClaims, allowed: 1 }),
    );
    expect(again).toEqual(commands);
  });

  test('nothing drifted, nothing decided', async () => {
    const nodeClaims = [initializedNodeClaim('current', staticPool)];

    expect(
      await staticDriftMethod.computeCommands(
        methodPass(fake, orchestrations, { nodePool: staticPool, nodeClaims }),
      ),
    ).toEqual([]);
  });
});
