// Multi-node consolidation on its own, against in-memory fakes with the emulator's SKU catalog and the
// shipped prices, as Karpenter tests its multi-node method: underutilized nodes whose pods fit on the
// others are deleted together in one command (at least two, within the Underutilized budget), validated
// again after the delay; a budget allowing none says so on the NodePool; a NodePool that consolidates
// only when empty is not its. Deciding writes nothing.
import { beforeEach, describe, expect, test } from 'vitest';
import { resetEventDedupe } from '../../../shared/lifecycle/disruption/blocked-events.js';
import { multiNodeConsolidationMethod } from '../../../shared/lifecycle/disruption/methods/multi-node-consolidation.js';
import { runningPod } from '../../support/consolidation-fixtures.js';
import { d4sNode, seedConsolidationCatalog, underutilizedPool } from '../../support/consolidation-pass.js';
import { fakeLifecycle, FakeOrchestrations, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { methodPass } from '../../support/method-pass.js';

const pool = underutilizedPool();

describe('multi-node consolidation', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    resetEventDedupe();
    seedConsolidationCatalog(fake, pool);
  });

  /** `count` D4s_v5 nodes, each running one pod of `cpu`. */
  const commandsFor = (count: number, cpu: string, allowed?: number) => {
    const pairs = Array.from({ length: count }, (_, i) => d4sNode(`n${i}`, pool));
    for (const { node } of pairs) {
      fake.workloads.pods.push(
        runningPod(`web-${node.metadata.name}`, node.metadata.name, { cpu, memory: '1Gi' }),
      );
    }
    return multiNodeConsolidationMethod.computeCommands(
      methodPass(fake, orchestrations, { nodePool: pool, pairs, allowed }),
    );
  };

  test('applies to NodePools that consolidate underutilized nodes, not to WhenEmpty ones', () => {
    expect(multiNodeConsolidationMethod.appliesTo(pool)).toBe(true);
    expect(multiNodeConsolidationMethod.appliesTo(underutilizedPool('WhenEmpty'))).toBe(false);
  });

  test('underutilized nodes are replaced together by one cheaper node', async () => {
    const commands = await commandsFor(3, '500m');

    expect(commands).toEqual([
      expect.objectContaining({
        method: 'multi-node-consolidation',
        reason: 'Underutilized',
        consolidationType: 'multi',
        candidates: ['n0', 'n1', 'n2'].map((name) => ({ name, uid: `uid-${name}` })),
        detail: 'replaced by one cheaper node (Standard_D2as_v5, Standard_D2s_v5)',
        validateAfterSeconds: fake.deps.settings.disruption.consolidationValidationSeconds,
      }),
    ]);
    expect(commands[0]?.replacements).toEqual([
      {
        requirements: expect.arrayContaining([
          {
            key: 'node.kubernetes.io/instance-type',
            operator: 'In',
            values: ['Standard_D2as_v5', 'Standard_D2s_v5'],
          },
        ]),
      },
    ]);
    expect(commands[0]?.savings).toBeGreaterThan(0);
  });

  test('within the budget: as many as it allows, deleted when their pods fit on the rest; one is not enough', async () => {
    const commands = await commandsFor(3, '500m', 2);

    expect(commands).toEqual([
      expect.objectContaining({ replacements: [], detail: 'node is underutilized' }),
    ]);
    expect(commands[0]?.candidates).toHaveLength(2);
    expect(await commandsFor(3, '500m', 1)).toEqual([]);
  });

  test('full nodes are not consolidated', async () => {
    expect(await commandsFor(3, '3')).toEqual([]);
  });

  test('a budget allowing none says so on the NodePool once', async () => {
    expect(await commandsFor(3, '500m', 0)).toEqual([]);
    expect(await commandsFor(3, '500m', 0)).toEqual([]);

    expect(fake.events).toEqual([
      expect.objectContaining({
        reason: 'DisruptionBlocked',
        target: expect.objectContaining({ kind: 'NodePool', name: 'general' }),
        message: 'No allowed disruptions for disruption reason Underutilized due to blocking budget',
      }),
    ]);
  });

  test('deciding writes nothing, and deciding again decides the same', async () => {
    const first = await commandsFor(3, '500m');
    fake.workloads.pods.length = 0;
    const second = await commandsFor(3, '500m');

    expect(second).toEqual(first);
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodes.writes).toEqual([]);
    expect(orchestrations.startCalls).toBe(0);
  });
});
