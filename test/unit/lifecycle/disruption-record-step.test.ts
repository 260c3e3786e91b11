// The disruption step's part of the record, against in-memory fakes: what the budget cuts is kept with the
// NodePool event's line, each command started is stated with its candidates' $/h and its replacements,
// the record reaches the onRecord sink (a failing sink never fails the pass), and the blocked counts go to
// the gauge (a cause gone reads 0, a NodePool gone loses its series) and to the NodePool's status.
import { beforeEach, describe, expect, test } from 'vitest';
import type { DisruptionRecord } from '../../../shared/decisions/explain/decision-record.js';
import {
  retainBlockedCandidatesPools,
  setBlockedCandidatesGauge,
} from '../../../shared/lifecycle/disruption/blocked-candidates.js';
import { disruptionStepOf } from '../../../shared/lifecycle/disruption/disruption-step.js';
import { disruptionMethods } from '../../../shared/lifecycle/disruption/methods/methods.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../../shared/models/karpenter.js';
import { createMetrics } from '../../../shared/observability/metrics.js';
import { silentLogger } from '../../../shared/observability/logger.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  immediateRollouts,
  fakeSweepContext,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { consolidatingPool } from '../../support/consolidation-fixtures.js';
import { driftedNodeClaim, initializedNodeClaim, nodeOf, poolWithBudget } from '../../support/method-pass.js';

const pool = poolWithBudget('2');
const gauge = 'karpenter_nodepools_disruption_blocked_candidates';

describe('the disruption step keeps a record of each pass', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
    immediateRollouts(fake);
  });

  test('drift within a budget of 2: two replaced, the third kept by the budget, counted on the gauge and status', async () => {
    const claims: NodeClaim[] = ['a', 'b', 'c'].map((n) =>
      fake.nodeClaims.seed(driftedNodeClaim(`general-${n}`, pool, 60)),
    );
    const nodes = claims.map((c) =>
      nodeOf(c, {
        labels: {
          [WellKnown.instanceTypeLabel]: 'Standard_D2s_v5',
          [WellKnown.capacityTypeLabel]: 'on-demand',
        },
      }),
    );
    for (const node of nodes) fake.nodes.seed(node);
    fake.nodePools.seed(pool);
    const records: DisruptionRecord[] = [];
    const step = disruptionStepOf(disruptionMethods, { onRecord: (r) => void records.push(r) });

    await step.run(
      fakeSweepContext(fake, new FakeOrchestrations(), { nodeClaims: claims, nodes, nodePools: [pool] }),
    );

    expect(records).toHaveLength(1);
    const record = records[0] as DisruptionRecord;
    expect(record.candidates.map((c) => [c.nodeClaim, c.method, c.cause])).toEqual([
      ['general-c', 'drift', 'Budget'],
      ['general-a', 'drift', 'Disrupted'],
      ['general-b', 'drift', 'Disrupted'],
    ]);
    expect(record.candidates[0]?.message).toBe(
      'No allowed disruptions for disruption reason Drifted due to blocking budget',
    );
    expect(record.commands).toHaveLength(2);
    const price = record.commands[0]?.pricePerHourBefore ?? 0;
    expect(price).toBeGreaterThan(0);
    expect(record.commands[0]).toMatchObject({
      method: 'drift',
      reason: 'Drifted',
      candidates: ['general-a'],
      replacements: ['NodePool general template'],
      // A template replacement is stated like for like until it launches.
      pricePerHourAfter: price,
      podsMoved: [],
    });
    expect(fake.deps.metrics.total(gauge, { nodepool: 'general', cause: 'Budget' })).toBe(1);
    expect((await fake.nodePools.get('general'))?.status?.disruptionBlocked).toEqual([
      { cause: 'Budget', count: 1 },
    ]);
  });

  test('a command the budget, read again, no longer allows is kept by the budget, not stated as started', async () => {
    const budgetOne: NodePool = {
      ...pool,
      spec: { ...pool.spec, disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '1' }] } },
    };
    const claims = ['a', 'b'].map((n) =>
      fake.nodeClaims.seed(driftedNodeClaim(`general-${n}`, budgetOne, 60)),
    );
    // Another writer marked general-b after this view was read.
    const b = claims[1] as NodeClaim;
    fake.nodeClaims.seed({
      ...b,
      status: {
        ...b.status,
        conditions: [
          ...(b.status?.conditions ?? []),
          {
            type: 'DisruptionReason',
            status: 'True',
            reason: 'Drifted',
            message: 'drifted',
            lastTransitionTime: new Date(FAKE_NOW.getTime() - 1_000).toISOString(),
          },
        ],
      },
    });
    fake.nodePools.seed(budgetOne);
    const records: DisruptionRecord[] = [];
    const step = disruptionStepOf(disruptionMethods, { onRecord: (r) => void records.push(r) });

    await step.run(
      fakeSweepContext(fake, new FakeOrchestrations(), {
        nodeClaims: claims,
        nodes: claims.map((c) => nodeOf(c)),
        nodePools: [budgetOne],
      }),
    );

    expect(records[0]?.commands).toEqual([]);
    expect(records[0]?.candidates.map((c) => [c.nodeClaim, c.decision, c.cause])).toEqual([
      ['general-b', 'keep', 'Budget'],
      ['general-a', 'keep', 'Budget'],
    ]);
  });

  test('consolidation: a node whose pods changed within consolidateAfter waits, with the Node named', async () => {
    const base = consolidatingPool('batch');
    const settling: NodePool = {
      ...base,
      spec: { ...base.spec, disruption: { ...base.spec.disruption, consolidateAfter: '1h' } },
    };
    const claim = initializedNodeClaim('batch-a', settling);
    claim.status = {
      ...claim.status,
      lastPodEventTime: new Date(FAKE_NOW.getTime() - 600_000).toISOString(),
    };
    fake.nodeClaims.seed(claim);
    fake.nodePools.seed(settling);
    const records: DisruptionRecord[] = [];
    const step = disruptionStepOf(disruptionMethods, { onRecord: (r) => void records.push(r) });

    await step.run(
      fakeSweepContext(fake, new FakeOrchestrations(), {
        nodeClaims: [claim],
        nodes: [nodeOf(claim)],
        nodePools: [settling],
      }),
    );

    expect(records[0]?.candidates).toEqual([
      {
        nodeClaim: 'batch-a',
        node: nodeOf(claim).metadata.name,
        method: 'emptiness',
        decision: 'keep',
        cause: 'ConsolidateAfter',
        message: `consolidateAfter has not passed since the node's last pod event (consolidatable at ${new Date(FAKE_NOW.getTime() + 3_000_000).toISOString()})`,
      },
    ]);
    expect(fake.deps.metrics.total(gauge, { nodepool: 'batch', cause: 'ConsolidateAfter' })).toBe(1);
  });

  test('a sink that fails is logged, and the pass still counts', async () => {
    fake.nodePools.seed(pool);
    const step = disruptionStepOf(disruptionMethods, {
      onRecord: () => Promise.reject(new Error('store unavailable')),
    });
    const report = await step.run(fakeSweepContext(fake, new FakeOrchestrations(), { nodePools: [pool] }));
    expect(report).toMatchObject({ examined: 1, failed: 0 });
  });
});

describe('the blocked-candidates gauge', () => {
  test('a cause gone reads 0; a NodePool gone loses its series', () => {
    const metrics = createMetrics(silentLogger);
    setBlockedCandidatesGauge(metrics, 'a', [
      { cause: 'PDB', count: 2 },
      { cause: 'Budget', count: 1 },
    ]);
    setBlockedCandidatesGauge(metrics, 'b', [{ cause: 'DoNotDisrupt', count: 1 }]);
    setBlockedCandidatesGauge(metrics, 'a', [{ cause: 'Budget', count: 3 }]);
    expect(metrics.total(gauge, { nodepool: 'a', cause: 'PDB' })).toBe(0);
    expect(metrics.count(gauge, { nodepool: 'a', cause: 'PDB' })).toBe(1);
    expect(metrics.total(gauge, { nodepool: 'a', cause: 'Budget' })).toBe(3);
    expect(metrics.total(gauge, { nodepool: 'b' })).toBe(1);

    retainBlockedCandidatesPools(metrics, new Set(['a']));
    expect(metrics.count(gauge, { nodepool: 'b' })).toBe(0);
    expect(metrics.count(gauge, { nodepool: 'a' })).toBe(2);
  });

  test('the store names a command before it is marked or started, so a host killed mid-pass leaves it explained', async () => {
    const fake = fakeLifecycle();
    immediateRollouts(fake);
    const claims: NodeClaim[] = ['a', 'b'].map((n) =>
      fake.nodeClaims.seed(driftedNodeClaim(`general-${n}`, pool, 60)),
    );
    const nodes = claims.map((c) => nodeOf(c));
    for (const node of nodes) fake.nodes.seed(node);
    fake.nodePools.seed(pool);
    const named = () =>
      fake.decisionRecords.records.flatMap((r) =>
        r.kind === 'disruption' ? r.commands.flatMap((c) => c.candidates) : [],
      );
    // What the store held when each command's first write (its mark) and its workflow's start came.
    const atFirstMark: string[][] = [];
    const marksBefore = fake.nodeClaims.writes.length;
    const orchestrations = new FakeOrchestrations();
    const atStart: string[][] = [];
    orchestrations.beforeStart = () => {
      atStart.push(named());
      if (atFirstMark.length === 0 && fake.nodeClaims.writes.length > marksBefore) atFirstMark.push(named());
    };
    const step = disruptionStepOf(disruptionMethods);

    await step.run(fakeSweepContext(fake, orchestrations, { nodeClaims: claims, nodes, nodePools: [pool] }));

    expect(orchestrations.started).toHaveLength(2);
    for (const held of [...atStart, ...atFirstMark]) {
      expect([...held].sort()).toEqual(['general-a', 'general-b']);
    }
    // One row for the pass: the final record replaced the first under the same ID.
    const passes = fake.decisionRecords.records.filter((r) => r.kind === 'disruption');
    expect(new Set(passes.map((r) => r.id)).size).toBe(1);
  });

  test('without a sink, a pass goes to deps.decisionRecords; the same decisions again are not written twice', async () => {
    const fake = fakeLifecycle();
    const steady: NodePool = {
      ...pool,
      metadata: { name: 'steady', uid: 'steady-uid' },
      spec: { ...pool.spec, disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '0' }] } },
    };
    const claims: NodeClaim[] = ['a', 'b'].map((n) =>
      fake.nodeClaims.seed(driftedNodeClaim(`steady-${n}`, steady, 60)),
    );
    const nodes = claims.map((c) => nodeOf(c));
    for (const node of nodes) fake.nodes.seed(node);
    fake.nodePools.seed(steady);
    const step = disruptionStepOf(disruptionMethods);
    const view = { nodeClaims: claims, nodes, nodePools: [steady] };

    await step.run(fakeSweepContext(fake, new FakeOrchestrations(), view));
    await step.run(fakeSweepContext(fake, new FakeOrchestrations(), view));
    const written = () =>
      fake.decisionRecords.records.filter((r) => r.kind === 'disruption' && r.nodePool === 'steady');
    expect(written()).toHaveLength(1);
    expect(written()[0]).toMatchObject({ kind: 'disruption', nodePool: 'steady' });

    // A different decision (the budget now allows one) is written at once.
    const opened: NodePool = {
      ...steady,
      spec: { ...steady.spec, disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '1' }] } },
    };
    fake.nodePools.seed(opened);
    await step.run(fakeSweepContext(fake, new FakeOrchestrations(), { ...view, nodePools: [opened] }));
    expect(written()).toHaveLength(2);
  });
});
