// The disruption step's bookkeeping, against in-memory fakes: commands start as one executor workflow
// each under their deterministic instance ID, within the method's budget; marks whose workflow is
// running are left alone; marks whose workflow never started (after the grace) or ended without
// releasing them are put back in service, the latter as a failed attempt. The workflow's own run is
// tested end to end (test/e2e/drift-replacement.test.ts, consolidation.test.ts, disruption-outage.test.ts).
import { beforeEach, describe, expect, test } from 'vitest';
import { findCondition } from '../../../shared/decisions/conditions.js';
import {
  disruptionStep,
  UNSTARTED_COMMAND_GRACE_MS,
} from '../../../shared/lifecycle/disruption/disruption-step.js';
import { DISRUPTION_MARKS_LEASE } from '../../../shared/lifecycle/disruption/budget-at-mark.js';
import type { ExecutorInput } from '../../../shared/lifecycle/disruption/command-workflow.js';
import { replacementNameFor } from '../../../shared/lifecycle/disruption/replacements.js';
import {
  ConditionTypes,
  WellKnown,
  type NodeClaim,
  type NodePool,
} from '../../../shared/models/karpenter.js';
import type { Node } from '../../../shared/models/kube.js';
import { DisruptionNames } from '../../../shared/runtime/function-names.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  immediateRollouts,
  fakeSweepContext,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { consolidatingPool } from '../../support/consolidation-fixtures.js';
import {
  driftedNodeClaim,
  HOUR_AGO,
  initializedNodeClaim,
  markedForDisruption,
  nodeOf,
  poolWithBudget,
} from '../../support/method-pass.js';

const pool = poolWithBudget('100%');

/** A launched, initialized, drifted NodeClaim of `pool`; `markedAt` adds a Drifted DisruptionReason mark. */
function drifted(name: string, markedAt?: string): NodeClaim {
  const claim = driftedNodeClaim(name, pool, 60);
  return markedAt ? markedForDisruption(claim, 'Drifted', markedAt) : claim;
}

const markOf = (nodeClaim: NodeClaim | undefined) =>
  findCondition(nodeClaim?.status?.conditions, ConditionTypes.disruptionReason);

describe('disruption step', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    immediateRollouts(fake);
    orchestrations = new FakeOrchestrations();
  });

  const run = (nodeClaims: NodeClaim[], nodePool = pool) => {
    fake.nodePools.seed(nodePool);
    return disruptionStep.run(fakeSweepContext(fake, orchestrations, { nodeClaims, nodePools: [nodePool] }));
  };

  test("drift holds back a node whose pod do-not-disrupt protects, unless its NodeClaim's terminationGracePeriod ends the wait", async () => {
    const withNode = (name: string, gracePeriod?: string): { claim: NodeClaim; node: Node } => {
      const providerID = `azure:///subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/aks-${name}`;
      const claim = drifted(name);
      claim.status = { ...claim.status, providerID, nodeName: `aks-${name}` };
      if (gracePeriod) claim.spec = { ...claim.spec, terminationGracePeriod: gracePeriod };
      const node: Node = {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: `aks-${name}`, uid: `node-${name}` },
        spec: { providerID },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      };
      return { claim: fake.nodeClaims.seed(claim), node };
    };
    const protectedPod = (nodeName: string) => ({
      namespace: 'default',
      name: `keep-${nodeName}`,
      uid: `pod-${nodeName}`,
      nodeName,
      phase: 'Running',
      ownerKinds: ['ReplicaSet'],
      annotations: { [WellKnown.doNotDisruptAnnotation]: 'true' },
      tolerations: [],
      labels: {},
      ready: true,
    });
    const held = withNode('general-a');
    const forced = withNode('general-b', '1h');
    fake.workloads.pods.push(protectedPod('aks-general-a'), protectedPod('aks-general-b'));
    fake.nodePools.seed(pool);
    await disruptionStep.run(
      fakeSweepContext(fake, orchestrations, {
        nodeClaims: [held.claim, forced.claim],
        nodes: [held.node, forced.node],
        nodePools: [pool],
      }),
    );
    expect(orchestrations.started.map((s) => s.instanceId)).toEqual(['replace-uid-general-b']);
  });

  test('drift: one workflow per candidate, marked first, no more than the Drifted budget allows', async () => {
    const claims = ['a', 'b', 'c'].map((n) => fake.nodeClaims.seed(drifted(`general-${n}`)));

    await run(claims, poolWithBudget('2'));

    expect(orchestrations.started.map((s) => [s.name, s.instanceId])).toEqual([
      [DisruptionNames.orchestrationV2, 'replace-uid-general-a'],
      [DisruptionNames.orchestrationV2, 'replace-uid-general-b'],
    ]);
    const input = orchestrations.started[0]?.input as ExecutorInput;
    expect(input.command).toMatchObject({
      method: 'drift',
      reason: 'Drifted',
      candidates: [{ name: 'general-a', uid: 'uid-general-a' }],
      replacements: [{}],
      attempt: 0,
    });
    expect(markOf(fake.nodeClaims.peek('general-a'))?.reason).toBe('Drifted');
    expect(markOf(fake.nodeClaims.peek('general-c'))).toBeUndefined();
  });

  test('drift reads the budget again before it marks: a mark made since the view was read counts', async () => {
    const claims = ['a', 'b'].map((n) => fake.nodeClaims.seed(drifted(`general-${n}`)));
    // Another writer (a freed slot's run, a workflow beginning) marked general-b after this view was read.
    fake.nodeClaims.seed(drifted('general-b', new Date(FAKE_NOW.getTime() - 1_000).toISOString()));

    await run(claims, poolWithBudget('1'));

    expect(orchestrations.started).toEqual([]);
    expect(markOf(fake.nodeClaims.peek('general-a'))).toBeUndefined();
  });

  test('a validated command whose candidates the view has behind (already deleting) is not started', async () => {
    const consolidating = consolidatingPool('batch');
    const empty: NodePool = {
      ...consolidating,
      spec: {
        ...consolidating.spec,
        disruption: { ...consolidating.spec.disruption, budgets: [{ nodes: '100%' }] },
      },
    };
    const nodeClaim = (name: string) => {
      const claim = initializedNodeClaim(name, empty);
      claim.status = { ...claim.status, lastPodEventTime: HOUR_AGO };
      return claim;
    };
    const [a, b] = [nodeClaim('batch-a'), nodeClaim('batch-b')];
    fake.nodes.seed(nodeOf(a));
    fake.nodes.seed(nodeOf(b));
    fake.nodePools.seed(empty);
    // Stored: batch-b is already deleting (an earlier command completed); the view still has it whole.
    fake.nodeClaims.seed(a);
    fake.nodeClaims.seed({ ...b, metadata: { ...b.metadata, deletionTimestamp: FAKE_NOW.toISOString() } });
    const view = { nodeClaims: [a, b], nodes: [nodeOf(a), nodeOf(b)], nodePools: [empty] };

    await disruptionStep.run(fakeSweepContext(fake, orchestrations, view));
    expect(orchestrations.started).toEqual([]);

    // With the view caught up, the node still empty is decided as usual.
    await disruptionStep.run(fakeSweepContext(fake, orchestrations, { ...view, nodeClaims: [a] }));
    expect(orchestrations.started.map((s) => (s.input as ExecutorInput).command.candidates)).toEqual([
      [{ name: 'batch-a', uid: 'uid-batch-a' }],
    ]);
  });

  test('a mark whose workflow never started is released after the grace and decided again at once', async () => {
    const markedAt = new Date(FAKE_NOW.getTime() - UNSTARTED_COMMAND_GRACE_MS - 1000).toISOString();
    const old = fake.nodeClaims.seed(drifted('general-a', markedAt));

    await run([old]);

    // Not a failure: no attempt recorded, so the new command names the same replacement.
    const current = fake.nodeClaims.peek('general-a');
    expect(current?.metadata.annotations?.['karpenter.azure.com/replacement-attempts']).toBeUndefined();
    expect(markOf(current)?.reason).toBe('Drifted');
    expect(orchestrations.started.map((s) => s.instanceId)).toEqual(['replace-uid-general-a']);
    const input = orchestrations.started[0]?.input as ExecutorInput;
    expect(input.command.attempt).toBe(0);
    expect(replacementNameFor('general', 'uid-general-a', input.command.attempt)).toBe(
      replacementNameFor('general', 'uid-general-a', 0),
    );
    expect(fake.events).toEqual([]);
  });

  test('a fresh mark without its workflow yet is left to the step that is starting it', async () => {
    const old = fake.nodeClaims.seed(drifted('general-a', FAKE_NOW.toISOString()));

    await run([old]);

    expect(orchestrations.started).toEqual([]);
    expect(fake.nodeClaims.writes.filter((w) => w.name === 'general-a')).toEqual([]);
  });

  test('a mark whose workflow is running is left alone, whichever version runs it', async () => {
    const old = fake.nodeClaims.seed(drifted('general-a', HOUR_AGO));
    orchestrations.seed('replace-uid-general-a', DisruptionNames.orchestration, 'Running');

    await run([old]);

    expect(orchestrations.started).toEqual([]);
    expect(orchestrations.purged).toEqual([]);
    expect(fake.nodeClaims.writes.filter((w) => w.name === 'general-a')).toEqual([]);
  });

  test('a mark whose workflow ended without releasing it is put back in service as a failed attempt', async () => {
    const old = fake.nodeClaims.seed(drifted('general-a', HOUR_AGO));
    orchestrations.seed('replace-uid-general-a', DisruptionNames.orchestrationV2, 'Failed');

    await run([old]);

    const released = fake.nodeClaims.peek('general-a');
    expect(markOf(released)).toBeUndefined();
    expect(released?.metadata.annotations?.['karpenter.azure.com/replacement-attempts']).toBe('1');
    expect(released?.metadata.annotations?.['karpenter.azure.com/replacement-backoff-until']).toBeDefined();
    expect(fake.events).toEqual([
      expect.objectContaining({
        type: 'Warning',
        reason: 'DisruptionReplacementFailed',
        message: expect.stringContaining('ended Failed'),
      }),
    ]);
    expect(orchestrations.purged).toEqual(['replace-uid-general-a']);
    // Backed off: the same pass does not start it again.
    expect(orchestrations.started).toEqual([]);
  });

  test('a deleting NodeClaim gets no new command; its finished workflow is purged', async () => {
    const marked = drifted('general-a', HOUR_AGO);
    const old = fake.nodeClaims.seed({
      ...marked,
      metadata: { ...marked.metadata, deletionTimestamp: '2026-11-30T11:30:00Z' },
    });
    orchestrations.seed('replace-uid-general-a', DisruptionNames.orchestrationV2, 'Completed');

    await run([old]);

    expect(orchestrations.purged).toEqual(['replace-uid-general-a']);
    expect(orchestrations.started).toEqual([]);
    expect(fake.events).toEqual([]);
  });

  test('expiration is forceful: every expired NodeClaim, whatever the budget, marked Expired', async () => {
    const created = new Date(FAKE_NOW.getTime() - 2 * 3_600_000).toISOString();
    const claims = ['a', 'b'].map((n) => {
      const base = drifted(`general-${n}`);
      return fake.nodeClaims.seed({
        ...base,
        metadata: { ...base.metadata, creationTimestamp: created },
        spec: { ...base.spec, expireAfter: '1h' },
        status: { conditions: [] },
      });
    });

    await run(claims, poolWithBudget('0'));

    expect(orchestrations.started.map((s) => s.instanceId)).toEqual([
      'expire-uid-general-a',
      'expire-uid-general-b',
    ]);
    expect((orchestrations.started[0]?.input as ExecutorInput).command).toMatchObject({
      method: 'expiration',
      reason: 'Expired',
      replacements: [],
    });
    expect(markOf(fake.nodeClaims.peek('general-b'))?.reason).toBe('Expired');
    expect(fake.leases.acquisitionsOf(DISRUPTION_MARKS_LEASE.name).length).toBeGreaterThan(0);
  });

  test('an expiration marks under the disruption-marks Lease: while another writer holds it, nothing is marked', async () => {
    const created = new Date(FAKE_NOW.getTime() - 2 * 3_600_000).toISOString();
    const base = drifted('general-a');
    const claim = fake.nodeClaims.seed({
      ...base,
      metadata: { ...base.metadata, creationTimestamp: created },
      spec: { ...base.spec, expireAfter: '1h' },
      status: { conditions: [] },
    });
    fake.leases.holdFor('graceful-writer', FAKE_NOW, 10, DISRUPTION_MARKS_LEASE.name);

    await run([claim]);

    expect(orchestrations.started).toEqual([]);
    expect(markOf(fake.nodeClaims.peek('general-a'))).toBeUndefined();
  });
});
