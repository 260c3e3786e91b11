// Single-node consolidation on its own, against in-memory fakes with the emulator's SKU catalog and the
// shipped prices, as Karpenter tests its single-node method: the first candidate that consolidates on its
// own is deleted (its pods fit elsewhere) or replaced by one strictly cheaper node; each candidate it
// tried and could not consolidate says why once (Unconsolidatable); a budget allowing none decides
// nothing (multi-node, before it, said so). Deciding writes nothing. After the delay, validate() (the
// Underutilized one multi-node shares) re-simulates from fresh state and keeps the command only if the
// simulation still decides the same; otherwise the failure is remembered on the NodePool and said once
// on each candidate.
import { activePodsDigest } from '../../../shared/decisions/consolidation/pod-events.js';
import { beforeEach, describe, expect, test } from 'vitest';
import { resetEventDedupe, UNCONSOLIDATABLE } from '../../../shared/lifecycle/disruption/blocked-events.js';
import { singleNodeConsolidationMethod } from '../../../shared/lifecycle/disruption/methods/single-node-consolidation.js';
import { CONSOLIDATION_FAILURES_ANNOTATION } from '../../../shared/decisions/consolidation/command-memory.js';
import type { DisruptionCommand } from '../../../shared/lifecycle/disruption/methods/method.js';
import type { NodeClaim } from '../../../shared/models/karpenter.js';
import type { Node } from '../../../shared/models/kube.js';
import { runningPod } from '../../support/consolidation-fixtures.js';
import { d4sNode, seedConsolidationCatalog, underutilizedPool } from '../../support/consolidation-pass.js';
import { fakeLifecycle, FakeOrchestrations, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { methodPass } from '../../support/method-pass.js';

const pool = underutilizedPool();

describe('single-node consolidation', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    resetEventDedupe();
    seedConsolidationCatalog(fake, pool);
  });

  /** D4s_v5 nodes running one pod each, of the CPU given per node. */
  const commandsFor = (cpus: string[], allowed?: number) => {
    const pairs: { nodeClaim: NodeClaim; node: Node }[] = cpus.map((_, i) => d4sNode(`n${i}`, pool));
    pairs.forEach(({ node }, i) =>
      fake.workloads.pods.push(
        runningPod(`web-${node.metadata.name}`, node.metadata.name, { cpu: cpus[i] ?? '0', memory: '1Gi' }),
      ),
    );
    return singleNodeConsolidationMethod.computeCommands(
      methodPass(fake, orchestrations, { nodePool: pool, pairs, allowed }),
    );
  };

  test('applies to NodePools that consolidate underutilized nodes, not to WhenEmpty ones', () => {
    expect(singleNodeConsolidationMethod.appliesTo(pool)).toBe(true);
    expect(singleNodeConsolidationMethod.appliesTo(underutilizedPool('WhenEmpty'))).toBe(false);
  });

  test('a lone underutilized node is replaced by one cheaper node', async () => {
    const commands = await commandsFor(['1']);

    expect(commands).toEqual([
      expect.objectContaining({
        method: 'single-node-consolidation',
        reason: 'Underutilized',
        consolidationType: 'single',
        candidates: [{ name: 'n0', uid: 'uid-n0' }],
        detail: 'replaced by one cheaper node (Standard_D2as_v5, Standard_D2s_v5)',
        validateAfterSeconds: fake.deps.settings.disruption.consolidationValidationSeconds,
      }),
    ]);
    expect(commands[0]?.replacements).toHaveLength(1);
  });

  test('a node whose pods fit on another is deleted, one node per command', async () => {
    const commands = await commandsFor(['500m', '500m']);

    expect(commands).toEqual([
      expect.objectContaining({ replacements: [], detail: 'node is underutilized' }),
    ]);
    expect(commands[0]?.candidates).toHaveLength(1);
  });

  test('a node no cheaper node can take over says why once, and is kept', async () => {
    expect(await commandsFor(['3'])).toEqual([]);
    fake.workloads.pods.length = 0;
    expect(await commandsFor(['3'])).toEqual([]);

    expect(fake.events.map((e) => [e.target.kind, e.reason])).toEqual([
      ['Node', UNCONSOLIDATABLE],
      ['NodeClaim', UNCONSOLIDATABLE],
    ]);
  });

  test('a budget allowing none decides nothing and says nothing', async () => {
    expect(await commandsFor(['1'], 0)).toEqual([]);
    expect(fake.events).toEqual([]);
  });

  test('deciding writes nothing, and deciding again decides the same', async () => {
    const first = await commandsFor(['1']);
    fake.workloads.pods.length = 0;
    expect(await commandsFor(['1'])).toEqual(first);

    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodes.writes).toEqual([]);
    expect(orchestrations.startCalls).toBe(0);
  });
});

describe('Underutilized validation', () => {
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
    resetEventDedupe();
    seedConsolidationCatalog(fake, pool);
  });

  /** A D4s_v5 node running a 1-CPU pod, in the stores and in the command single-node decides for it. */
  const decidedReplacement = async (): Promise<DisruptionCommand> => {
    const { nodeClaim, node } = d4sNode('n0', pool);
    fake.nodeClaims.seed(nodeClaim);
    fake.nodes.seed(node);
    fake.workloads.pods.push(runningPod('web', node.metadata.name, { cpu: '1', memory: '1Gi' }));
    const [command] = await singleNodeConsolidationMethod.computeCommands(
      methodPass(fake, new FakeOrchestrations(), { nodePool: pool, nodeClaims: [nodeClaim], nodes: [node] }),
    );
    if (!command) throw new Error('no command decided');
    return command;
  };
  const validate = (command: DisruptionCommand) =>
    singleNodeConsolidationMethod.validate!(fake.deps, command, {
      orchestrations: new FakeOrchestrations(),
      invocationId: 'i',
    });

  test('a simulation that still decides the same keeps the command, writing nothing', async () => {
    const command = await decidedReplacement();
    const web = fake.workloads.pods.filter((p) => p.nodeName === 'aks-n0');

    expect(await validate(command)).toEqual({
      command: { ...command, candidates: [{ name: 'n0', uid: 'uid-n0', podsDigest: activePodsDigest(web) }] },
    });
    expect(fake.nodePools.writes).toEqual([]);
  });

  test('a simulation that now decides otherwise is remembered on the NodePool and said once on the candidate', async () => {
    const command = await decidedReplacement();
    fake.events.length = 0;
    fake.workloads.pods.push(runningPod('late', 'aks-n0', { cpu: '2500m', memory: '1Gi' }));

    const validated = await validate(command);

    expect(validated).toEqual({ invalid: expect.any(String) });
    expect(fake.nodePools.writes).toEqual([{ verb: 'patch', name: 'general' }]);
    expect(
      fake.nodePools.peek('general')?.metadata.annotations?.[CONSOLIDATION_FAILURES_ANNOTATION],
    ).toContain(command.key);
    expect(fake.events.map((e) => [e.target.kind, e.reason])).toEqual([
      ['Node', UNCONSOLIDATABLE],
      ['NodeClaim', UNCONSOLIDATABLE],
    ]);
    expect(fake.events[1]?.message).toMatch(/^Consolidation failed validation: /);
  });

  test('a candidate no longer qualifying makes the whole command invalid', async () => {
    const command = await decidedReplacement();
    await fake.nodeClaims.mergePatch('n0', {
      metadata: { annotations: { 'karpenter.sh/do-not-disrupt': 'true' } },
    });

    expect(await validate(command)).toEqual({ invalid: expect.stringMatching(/^n0: /) });
    expect(fake.nodePools.writes).toEqual([]);
  });
});
