// The drift method and the disruption step under the Canary policy, on the in-memory fakes: no drifted
// node is replaced before its NodePool's rollout has started, then no more than the wave's floor allows
// (and the budget), none while paused or halted, and the mark, reading the NodePool fresh, holds a writer
// whose view still showed room; the rollout step starts the NodePool's workflow once, under its
// deterministic ID, and again only when it is gone while the rollout is in progress.
import { beforeEach, describe, expect, test } from 'vitest';
import {
  RolloutAnnotations,
  rolloutInstanceId,
  rolloutTargetOf,
  serializeRolloutState,
  type RolloutState,
} from '../../../shared/decisions/rollout.js';
import { disruptionStep } from '../../../shared/lifecycle/disruption/disruption-step.js';
import { driftMethod } from '../../../shared/lifecycle/disruption/methods/drift.js';
import { rolloutStep } from '../../../shared/lifecycle/disruption/rollout/rollout-step.js';
import type { NodeClaim, NodePool } from '../../../shared/models/karpenter.js';
import { RolloutNames } from '../../../shared/runtime/function-names.js';
import { consolidatingPool } from '../../support/consolidation-fixtures.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  immediateRollouts,
  fakeSweepContext,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { nodeClass } from '../../support/fixtures.js';
import { driftedNodeClaim, methodPass, nodeOf } from '../../support/method-pass.js';

const basePool: NodePool = {
  ...consolidatingPool('general'),
  metadata: { name: 'general', uid: 'pool-uid' },
  // Consolidation never: only drift acts on these nodes.
  spec: {
    ...consolidatingPool('general').spec,
    disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '2' }] },
  },
};
const cls = nodeClass('default', 'Ubuntu2204');
const target = rolloutTargetOf(basePool, cls);
const claims = (n: number): NodeClaim[] =>
  Array.from({ length: n }, (_, i) => driftedNodeClaim(`general-${i}`, basePool, 30 + i));

function state(overrides: Partial<RolloutState> = {}): RolloutState {
  const at = FAKE_NOW.toISOString();
  return {
    target: target.id,
    spec: target.spec,
    phase: 'canary',
    wave: 1,
    floor: 5,
    startedAt: at,
    gatesFrom: at,
    waveStartedAt: at,
    ...overrides,
  };
}

const poolWith = (annotations: Record<string, string>): NodePool => ({
  ...basePool,
  metadata: { ...basePool.metadata, annotations },
});
const rolling = (s: RolloutState, more: Record<string, string> = {}) =>
  poolWith({ [RolloutAnnotations.state]: serializeRolloutState(s), ...more });

describe('the drift method under a rollout', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
  });

  const decided = async (nodePool: NodePool, allowed = 2) => {
    const nodeClaims = claims(6);
    const pass = methodPass(fake, orchestrations, { nodePool, nodeClaims, allowed });
    // The sweep's view with the NodePool's class, whose hash and images are part of the target.
    const sweep = fakeSweepContext(fake, orchestrations, {
      nodeClaims,
      nodes: nodeClaims.map((c) => nodeOf(c)),
      nodePools: [nodePool],
      nodeClasses: [cls],
    });
    const commands = await driftMethod.computeCommands({ ...pass, sweep });
    return commands.map((c) => c.candidates[0]?.name);
  };

  test.each<[string, NodePool, number]>([
    ['no rollout of the target yet', basePool, 0],
    ['the canary: floor 5 of 6', rolling(state()), 1],
    ['a wave: floor 3 of 6, budget 2', rolling(state({ phase: 'waves', floor: 3 })), 2],
    ['a wave larger than the budget', rolling(state({ phase: 'waves', floor: 0 })), 2],
    ['paused', rolling(state({ phase: 'waves', floor: 0 }), { [RolloutAnnotations.paused]: 'true' }), 0],
    ['halted', rolling(state({ phase: 'halted' })), 0],
    ['rolled out: the budget', rolling(state({ phase: 'rolledOut' })), 2],
    ['the Immediate policy by annotation', poolWith({ [RolloutAnnotations.policy]: 'Immediate' }), 2],
  ])('%s: %i commands', async (_, nodePool, count) => {
    expect(await decided(nodePool)).toHaveLength(count);
  });

  test('oldest drift first within the room', async () => {
    expect(await decided(rolling(state()))).toEqual(['general-5']);
  });

  test('the Immediate setting: the budget alone', async () => {
    immediateRollouts(fake);
    expect(await decided(basePool)).toHaveLength(2);
  });
});

describe('the disruption step under a rollout', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    fake.nodeClasses.seed(cls);
  });

  const run = (viewPool: NodePool, storedPool: NodePool = viewPool) => {
    fake.nodePools.seed(storedPool);
    const nodeClaims = claims(6).map((c) => fake.nodeClaims.seed(c));
    for (const c of nodeClaims) fake.nodes.seed(nodeOf(c));
    return disruptionStep.run(
      fakeSweepContext(fake, orchestrations, {
        nodeClaims,
        nodes: nodeClaims.map((c) => nodeOf(c)),
        nodePools: [viewPool],
        nodeClasses: [cls],
      }),
    );
  };

  test('the canary: one replacement workflow, where the budget allows two', async () => {
    await run(rolling(state()));
    expect(orchestrations.started.map((s) => s.instanceId)).toEqual(['replace-uid-general-5']);
  });

  test('the mark reads the NodePool fresh: a view that still shows the canary’s room marks nothing once halted', async () => {
    await run(rolling(state()), rolling(state({ phase: 'halted' })));
    expect(orchestrations.started).toEqual([]);
    expect(fake.nodeClaims.writes).toEqual([]);
  });
});

describe('the rollout step', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
  });

  const sweep = (nodePool: NodePool, nodeClaims: NodeClaim[] = claims(3)) =>
    rolloutStep.run(
      fakeSweepContext(fake, orchestrations, { nodeClaims, nodePools: [nodePool], nodeClasses: [cls] }),
    );
  const id = rolloutInstanceId('pool-uid', target.id);

  test('starts the workflow of the target once for drifted nodes, with its poll', async () => {
    expect((await sweep(basePool)).acted).toBe(1);
    expect((await sweep(basePool)).acted).toBe(0);
    expect(orchestrations.started).toEqual([
      {
        name: RolloutNames.orchestration,
        instanceId: id,
        input: {
          nodePool: { name: 'general', uid: 'pool-uid' },
          target: target.id,
          pollSeconds: fake.deps.settings.rollout.pollSeconds,
        },
      },
    ]);
  });

  test('nothing drifted, the Immediate policy, a rollout rolled out or halted: nothing started', async () => {
    await sweep(basePool, []);
    await sweep(poolWith({ [RolloutAnnotations.policy]: 'Immediate' }));
    await sweep(rolling(state({ phase: 'rolledOut' })));
    await sweep(rolling(state({ phase: 'halted' })));
    expect(orchestrations.started).toEqual([]);
  });

  test('a rollout in progress whose workflow ended is started again, the old instance purged', async () => {
    orchestrations.seed(id, RolloutNames.orchestration, 'Failed');
    await sweep(rolling(state({ phase: 'waves' })));
    expect(orchestrations.purged).toEqual([id]);
    expect(orchestrations.started.map((s) => s.instanceId)).toEqual([id]);
  });

  test('a halted rollout resumes when the annotation names its target', async () => {
    orchestrations.seed(id, RolloutNames.orchestration, 'Completed');
    await sweep(rolling(state({ phase: 'halted' }), { [RolloutAnnotations.resume]: target.id }));
    expect(orchestrations.started.map((s) => s.instanceId)).toEqual([id]);
  });
});
