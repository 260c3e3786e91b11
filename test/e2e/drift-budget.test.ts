// drift-budget end to end, as `npm start` plays it: a static NodePool of 10 with budget "5" drifts on an
// imageFamily change; replacements run through the app's own timer-driven sweep (scoped to this file's
// objects) and replacement orchestrations. Never more than 5 disrupting; 5 at once in the first wave.
// What it measures is the budget's fan-out, so its NodePool is created under the Immediate rollout
// policy (a Canary rollout's canary and waves are test/e2e/rollout.test.ts's).
import { expect, test } from 'vitest';
import { RolloutAnnotations } from '../../shared/decisions/rollout.js';
import type { KarpenterObjects } from '../../shared/kube/custom-objects.js';
import type { NodePool } from '../../shared/models/karpenter.js';
import { driftBudget } from '../../local/scenarios/drift-budget.js';
import type { Scenario } from '../../local/scenarios/index.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

/** The admin objects, creating every NodePool with the rollout-policy annotation Immediate. */
function immediateNodePools(objects: KarpenterObjects): KarpenterObjects {
  const nodePools = objects.nodePools;
  const create = (nodePool: NodePool) =>
    nodePools.create({
      ...nodePool,
      metadata: {
        ...nodePool.metadata,
        annotations: { ...nodePool.metadata.annotations, [RolloutAnnotations.policy]: 'Immediate' },
      },
    });
  return {
    ...objects,
    nodePools: new Proxy(nodePools, {
      get(target, property) {
        if (property === 'create') return create;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    }),
  };
}

const immediateDriftBudget: Scenario = {
  ...driftBudget,
  play: (context) =>
    driftBudget.play({
      ...context,
      stack: { ...context.stack, admin: { objects: immediateNodePools(context.stack.admin.objects) } },
    }),
};

test('10 drifted nodes with budget "5": 5 in flight at once, never 6', { timeout: 240_000 }, async () => {
  const report = await playEndToEnd(immediateDriftBudget);
  expectInvariantsHold(report);
  expect(report.outcome.figures.maxInFlight).toBe(5);
});
