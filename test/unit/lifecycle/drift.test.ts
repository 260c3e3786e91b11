// The drift method on its own, against in-memory fakes, as Karpenter tests its drift method: each
// NodeClaim marked Drifted=True becomes a command of its own with one replacement from the NodePool's
// template, oldest drift first, as many as the Drifted budget allows; one already disrupting, held back
// by a failed replacement's backoff, or whose pod do-not-disrupt protects waits. It decides for dynamic
// NodePools only (static ones have static-drift.test.ts). Deciding writes nothing.
import { beforeEach, describe, expect, test } from 'vitest';
import { DisruptionAnnotations } from '../../../shared/decisions/disruption-state.js';
import { driftMethod } from '../../../shared/lifecycle/disruption/methods/drift.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../../shared/models/karpenter.js';
import { consolidatingPool, runningPod } from '../../support/consolidation-fixtures.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  immediateRollouts,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import {
  driftedNodeClaim as driftedNodeClaimOf,
  initializedNodeClaim,
  methodPass,
} from '../../support/method-pass.js';

const pool = consolidatingPool('general');
const minutesAgo = (minutes: number) => new Date(FAKE_NOW.getTime() - minutes * 60_000).toISOString();
const driftedNodeClaim = (name: string, sinceMinutes = 30) => driftedNodeClaimOf(name, pool, sinceMinutes);

describe('drift method', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    immediateRollouts(fake);
    orchestrations = new FakeOrchestrations();
  });

  const commandsFor = (nodeClaims: NodeClaim[], allowed?: number) =>
    driftMethod.computeCommands(methodPass(fake, orchestrations, { nodePool: pool, nodeClaims, allowed }));

  test('decides for dynamic NodePools only', () => {
    expect(driftMethod.appliesTo(pool)).toBe(true);
    expect(driftMethod.appliesTo({ ...pool, spec: { ...pool.spec, replicas: 2 } })).toBe(false);
  });

  test('a drifted NodeClaim is a command of its own with one replacement, saying why it drifted', async () => {
    expect(await commandsFor([driftedNodeClaim('a'), initializedNodeClaim('current', pool)])).toEqual([
      {
        method: 'drift',
        reason: 'Drifted',
        nodePool: { name: 'general', uid: 'uid-general' },
        candidates: [{ name: 'a', uid: 'uid-a' }],
        replacements: [{}],
        detail: 'NodeClassDrifted: imageFamily',
        decidedAt: FAKE_NOW.toISOString(),
        validateAfterSeconds: 0,
        attempt: 0,
        consolidationType: '',
        consolidationPolicy: 'WhenEmptyOrUnderutilized',
      },
    ]);
  });

  test('as many as the budget allows, oldest drift first', async () => {
    const commands = await commandsFor(
      [driftedNodeClaim('recent', 5), driftedNodeClaim('oldest', 50), driftedNodeClaim('middle', 20)],
      2,
    );

    expect(commands.map((c) => c.candidates[0]?.name)).toEqual(['oldest', 'middle']);
    expect(await commandsFor([driftedNodeClaim('a')], 0)).toEqual([]);
  });

  test('waits for a NodeClaim already disrupting', async () => {
    const marked = driftedNodeClaim('marked');
    marked.status!.conditions!.push({
      type: ConditionTypes.disruptionReason,
      status: 'True',
      reason: 'Drifted',
      message: '',
      lastTransitionTime: minutesAgo(1),
    });
    const deleting = driftedNodeClaim('deleting');
    deleting.metadata.deletionTimestamp = minutesAgo(1);

    expect(await commandsFor([marked, deleting])).toEqual([]);
  });

  test('a failed replacement holds the node back until its backoff ends, and the retry counts the attempt', async () => {
    const held = driftedNodeClaim('held');
    held.metadata.annotations = {
      [DisruptionAnnotations.replacementAttempts]: '2',
      [DisruptionAnnotations.replacementBackoffUntil]: new Date(FAKE_NOW.getTime() + 60_000).toISOString(),
    };
    const due = driftedNodeClaim('due');
    due.metadata.annotations = {
      [DisruptionAnnotations.replacementAttempts]: '2',
      [DisruptionAnnotations.replacementBackoffUntil]: minutesAgo(1),
    };

    const commands = await commandsFor([held, due]);

    expect(commands.map((c) => [c.candidates[0]?.name, c.attempt])).toEqual([['due', 2]]);
  });

  test("a first try keeps the candidate's zone; a retry after a failed replacement goes wherever it may", async () => {
    const zoned = (name: string, attempts?: string): NodeClaim => {
      const claim = driftedNodeClaim(name);
      claim.metadata.labels = { ...claim.metadata.labels, [WellKnown.zoneLabel]: 'westus2-2' };
      if (attempts) {
        claim.metadata.annotations = {
          [DisruptionAnnotations.replacementAttempts]: attempts,
          [DisruptionAnnotations.replacementBackoffUntil]: minutesAgo(1),
        };
      }
      return claim;
    };
    const commands = await commandsFor([zoned('first'), zoned('retry', '1')]);
    expect(commands.map((c) => [c.candidates[0]?.name, c.replacements])).toEqual([
      ['first', [{ zone: 'westus2-2' }]],
      ['retry', [{}]],
    ]);
  });

  test('waits for a node whose pod do-not-disrupt protects', async () => {
    fake.workloads.pods.push({
      ...runningPod('precious', 'aks-a', { cpu: '1' }),
      annotations: { [WellKnown.doNotDisruptAnnotation]: 'true' },
    });

    expect(await commandsFor([driftedNodeClaim('a')])).toEqual([]);
  });

  test('deciding writes nothing, and deciding again decides the same', async () => {
    const nodeClaims = [driftedNodeClaim('a'), driftedNodeClaim('b')];

    expect(await commandsFor(nodeClaims)).toEqual(await commandsFor(nodeClaims));
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
    expect(orchestrations.startCalls).toBe(0);
  });
});
