// The repair method on its own, against in-memory fakes, as Karpenter tests its node health controller:
// with the NodeRepair gate on, a node whose condition matches a repair policy past its toleration is
// repaired: a policy that replaces becomes a command with a replacement, one that reboots a command for
// the repair workflow, which the method only decides and the disruption step starts (once: a running one
// is not started again); a node within its toleration is left alone, and more than 20% of the NodePool
// unhealthy holds every repair back (NodeRepairBlocked). The workflow itself is tested in
// test/unit/repair-workflow.test.ts and test/e2e/.
import { beforeEach, describe, expect, test } from 'vitest';
import { findCondition } from '../../../shared/decisions/conditions.js';
import { disruptionStepOf } from '../../../shared/lifecycle/disruption/disruption-step.js';
import { repairMethod } from '../../../shared/lifecycle/disruption/methods/repair.js';
import { repairInstanceId } from '../../../shared/lifecycle/disruption/repair/repair-workflow.js';
import type { RepairPolicy } from '../../../shared/decisions/node-repair/policies.js';
import { resetEventDedupe } from '../../../shared/lifecycle/disruption/blocked-events.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../../shared/models/karpenter.js';
import type { Node } from '../../../shared/models/kube.js';
import { RepairNames } from '../../../shared/runtime/function-names.js';
import { consolidatingPool } from '../../support/consolidation-fixtures.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  fakeSweepContext,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { initializedNodeClaim, methodPass, nodeOf } from '../../support/method-pass.js';

const basePool = consolidatingPool('general');
const pool: NodePool = {
  ...basePool,
  spec: { ...basePool.spec, disruption: { ...basePool.spec.disruption, budgets: [{ nodes: '100%' }] } },
};
const minutesAgo = (minutes: number) => new Date(FAKE_NOW.getTime() - minutes * 60_000).toISOString();

/** `total` nodes of `pool`; the first `unhealthy` of them NotReady since `minutes` ago. */
function cluster(total: number, unhealthy: number, minutes = 60): { nodeClaims: NodeClaim[]; nodes: Node[] } {
  const nodeClaims = Array.from({ length: total }, (_, i) => initializedNodeClaim(`n${i}`, pool));
  const nodes = nodeClaims.map((nodeClaim, i) => {
    const node = nodeOf(nodeClaim, { ready: i < unhealthy ? 'False' : 'True' });
    node.status!.conditions![0]!.lastTransitionTime = minutesAgo(minutes);
    return node;
  });
  return { nodeClaims, nodes };
}

describe('repair method', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    resetEventDedupe();
    fake.deps.settings = { ...fake.deps.settings, repair: { ...fake.deps.settings.repair, enabled: true } };
  });

  const withPolicies = (policies: RepairPolicy[]) => {
    fake.deps.settings = { ...fake.deps.settings, repair: { ...fake.deps.settings.repair, policies } };
  };
  const commandsFor = (state: { nodeClaims: NodeClaim[]; nodes: Node[] }) =>
    repairMethod.computeCommands(methodPass(fake, orchestrations, { nodePool: pool, ...state }));

  test('with the NodeRepair gate off, repairs nothing', async () => {
    fake.deps.settings = { ...fake.deps.settings, repair: { ...fake.deps.settings.repair, enabled: false } };

    expect(await commandsFor(cluster(5, 1))).toEqual([]);
    expect(orchestrations.startCalls).toBe(0);
  });

  test('a policy that replaces makes the unhealthy node a command with a replacement', async () => {
    withPolicies([
      { conditionType: 'Ready', conditionStatus: 'False', tolerationMs: 600_000, action: 'replace' },
    ]);

    expect(await commandsFor(cluster(5, 1))).toEqual([
      expect.objectContaining({
        method: 'repair',
        reason: 'Unhealthy',
        candidates: [{ name: 'n0', uid: 'uid-n0' }],
        replacements: [{}],
        detail: expect.stringContaining('Ready=False'),
      }),
    ]);
    expect(orchestrations.startCalls).toBe(0);
  });

  test('a policy that reboots makes a command for the repair workflow, and starts nothing itself', async () => {
    expect(await commandsFor(cluster(5, 1))).toEqual([
      expect.objectContaining({
        method: 'repair',
        reason: 'Unhealthy',
        candidates: [{ name: 'n0', uid: 'uid-n0' }],
        replacements: [],
        detail: expect.stringContaining('Ready=False'),
        ownWorkflow: {
          orchestration: RepairNames.orchestration,
          input: expect.objectContaining({
            firstStep: 'reboot',
            nodeClaim: expect.objectContaining({ name: 'n0' }),
          }),
        },
      }),
    ]);
    expect(orchestrations.startCalls).toBe(0);
  });

  test('the disruption step starts the repair workflow once, and marks the node in its view at once', async () => {
    fake.nodePools.seed(pool);
    const state = cluster(5, 1);
    const step = disruptionStepOf([repairMethod]);
    const sweep = () => fakeSweepContext(fake, orchestrations, { ...state, nodePools: [pool] });

    const first = sweep();
    await step.run(first);
    await step.run(sweep());

    expect(orchestrations.started).toEqual([
      expect.objectContaining({
        name: RepairNames.orchestration,
        instanceId: repairInstanceId('uid-n0'),
        input: expect.objectContaining({
          firstStep: 'reboot',
          nodeClaim: expect.objectContaining({ name: 'n0' }),
        }),
      }),
    ]);
    const viewed = first.view.nodeClaims().find((c) => c.metadata.name === 'n0');
    expect(findCondition(viewed?.status?.conditions, ConditionTypes.disruptionReason)).toMatchObject({
      status: 'True',
      reason: 'Unhealthy',
      message: expect.stringContaining('Ready=False'),
    });
    // The workflow marks the NodeClaim itself: the step wrote nothing to it.
    expect(fake.nodeClaims.writes).toEqual([]);
  });

  test('a spot eviction notice: the step starts the preempted repair at once, drained within the notice', async () => {
    withPolicies([
      { conditionType: 'PreemptionScheduled', conditionStatus: 'True', tolerationMs: 0, action: 'preempted' },
    ]);
    fake.nodePools.seed(pool);
    const state = cluster(5, 0);
    state.nodes[0]!.status!.conditions!.push({
      type: 'PreemptionScheduled',
      status: 'True',
      lastTransitionTime: FAKE_NOW.toISOString(),
    });

    await disruptionStepOf([repairMethod]).run(
      fakeSweepContext(fake, orchestrations, { ...state, nodePools: [pool] }),
    );

    const drainBy = new Date(
      FAKE_NOW.getTime() + fake.deps.settings.repair.preemptionDrainSeconds * 1000,
    ).toISOString();
    expect(orchestrations.started).toEqual([
      expect.objectContaining({
        name: RepairNames.orchestration,
        instanceId: repairInstanceId('uid-n0'),
        input: expect.objectContaining({ firstStep: 'preempted', drainBy }),
      }),
    ]);
  });

  test('a node within its toleration is left alone', async () => {
    expect(await commandsFor(cluster(5, 1, 5))).toEqual([]);
    expect(orchestrations.startCalls).toBe(0);
  });

  test('more than 20% of the NodePool unhealthy holds every repair back, saying so once on each', async () => {
    const state = cluster(5, 2);

    expect(await commandsFor(state)).toEqual([]);
    expect(await commandsFor(state)).toEqual([]);

    expect(orchestrations.startCalls).toBe(0);
    expect(
      fake.events.filter((e) => e.target.kind === 'NodeClaim').map((e) => [e.target.name, e.reason]),
    ).toEqual([
      ['n0', 'NodeRepairBlocked'],
      ['n1', 'NodeRepairBlocked'],
    ]);
  });

  test('healthy nodes: nothing is decided or written', async () => {
    expect(await commandsFor(cluster(5, 0))).toEqual([]);

    expect(orchestrations.startCalls).toBe(0);
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
  });
});
