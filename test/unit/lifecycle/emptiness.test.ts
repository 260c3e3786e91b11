// The emptiness method on its own, against in-memory fakes, as Karpenter tests its emptiness method:
// initialized nodes past consolidateAfter with no pod to move (DaemonSet pods do not count) become one
// command, as many as the Empty budget allows, longest consolidatable first, validated again after the
// validation delay; a node with a pod to move, one not yet past consolidateAfter or one do-not-disrupt
// protects is not a candidate (the last says why in a DisruptionBlocked event); a budget allowing none
// says so on the NodePool. Static NodePools and consolidateAfter Never are not consolidated. After the
// delay, validate() keeps only the candidates still empty, within the budget as it is then.
import { beforeEach, describe, expect, test } from 'vitest';
import { resetEventDedupe } from '../../../shared/lifecycle/disruption/blocked-events.js';
import { activePodsDigest } from '../../../shared/decisions/consolidation/pod-events.js';
import { emptinessMethod } from '../../../shared/lifecycle/disruption/methods/emptiness.js';
import type { DisruptionCommand } from '../../../shared/lifecycle/disruption/methods/method.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../../shared/models/karpenter.js';
import { consolidatingPool, runningPod } from '../../support/consolidation-fixtures.js';
import {
  FAKE_NOW,
  fakeLifecycle,
  FakeOrchestrations,
  type FakeLifecycle,
} from '../../support/fake-lifecycle.js';
import { initializedNodeClaim, methodPass, nodeOf } from '../../support/method-pass.js';

const pool = consolidatingPool('general');

describe('emptiness method', () => {
  let fake: FakeLifecycle;
  let orchestrations: FakeOrchestrations;
  beforeEach(() => {
    fake = fakeLifecycle();
    orchestrations = new FakeOrchestrations();
    resetEventDedupe();
  });

  const commandsFor = (nodeClaims: NodeClaim[], options: { allowed?: number; nodePool?: NodePool } = {}) =>
    emptinessMethod.computeCommands(
      methodPass(fake, orchestrations, {
        nodePool: options.nodePool ?? pool,
        nodeClaims,
        allowed: options.allowed,
      }),
    );
  /** Initialized `minutesAgo` minutes ago (consolidatable since then, consolidateAfter being 0 s). */
  const claim = (name: string, minutesAgo = 60) => {
    const nodeClaim = initializedNodeClaim(name, pool);
    nodeClaim.status!.lastPodEventTime = new Date(FAKE_NOW.getTime() - minutesAgo * 60_000).toISOString();
    return nodeClaim;
  };

  test('applies to dynamic NodePools that consolidate, not to static ones or consolidateAfter Never', () => {
    expect(emptinessMethod.appliesTo(pool)).toBe(true);
    expect(emptinessMethod.appliesTo({ ...pool, spec: { ...pool.spec, replicas: 3 } })).toBe(false);
    expect(
      emptinessMethod.appliesTo({
        ...pool,
        spec: { ...pool.spec, disruption: { ...pool.spec.disruption, consolidateAfter: 'Never' } },
      }),
    ).toBe(false);
  });

  test('empty nodes become one command, validated after the delay; a DaemonSet pod does not count', async () => {
    fake.workloads.pods.push({ ...runningPod('agent', 'aks-a', { cpu: '100m' }), ownerKinds: ['DaemonSet'] });

    const commands = await commandsFor([claim('a'), claim('b')]);

    expect(commands).toEqual([
      expect.objectContaining({
        method: 'emptiness',
        reason: 'Empty',
        consolidationType: 'empty',
        candidates: [
          { name: 'a', uid: 'uid-a' },
          { name: 'b', uid: 'uid-b' },
        ],
        replacements: [],
        detail: 'node is empty',
        validateAfterSeconds: fake.deps.settings.disruption.consolidationValidationSeconds,
      }),
    ]);
  });

  test('a node with a pod to move is not empty', async () => {
    fake.workloads.pods.push(runningPod('web', 'aks-a', { cpu: '1' }));

    expect(await commandsFor([claim('a')])).toEqual([]);
  });

  test('takes as many as the budget allows, longest consolidatable first', async () => {
    const commands = await commandsFor([claim('recent', 5), claim('oldest', 50), claim('middle', 20)], {
      allowed: 2,
    });

    expect(commands.map((c) => c.candidates.map((x) => x.name))).toEqual([['oldest', 'middle']]);
  });

  test('a budget allowing none says so on the NodePool once, and decides nothing', async () => {
    expect(await commandsFor([claim('a')], { allowed: 0 })).toEqual([]);
    expect(await commandsFor([claim('a')], { allowed: 0 })).toEqual([]);

    expect(fake.events).toEqual([
      expect.objectContaining({
        reason: 'DisruptionBlocked',
        target: expect.objectContaining({ kind: 'NodePool', name: 'general' }),
        message: 'No allowed disruptions for disruption reason Empty due to blocking budget',
      }),
    ]);
  });

  test('a node do-not-disrupt protects is not a candidate, and says why once on the Node and the NodeClaim', async () => {
    const protectedClaim = claim('a');
    protectedClaim.metadata.annotations = { [WellKnown.doNotDisruptAnnotation]: 'true' };
    const nodes = [nodeOf(protectedClaim)];

    const pass = () =>
      methodPass(fake, orchestrations, { nodePool: pool, nodeClaims: [protectedClaim], nodes });
    expect(await emptinessMethod.computeCommands(pass())).toEqual([]);
    expect(await emptinessMethod.computeCommands(pass())).toEqual([]);

    expect(fake.events.map((e) => [e.target.kind, e.reason])).toEqual([
      ['Node', 'DisruptionBlocked'],
      ['NodeClaim', 'DisruptionBlocked'],
    ]);
  });

  test('a node whose consolidateAfter has not passed since its last pod event is not a candidate', async () => {
    const waiting = {
      ...pool,
      spec: { ...pool.spec, disruption: { ...pool.spec.disruption, consolidateAfter: '30m' } },
    };

    expect(await commandsFor([claim('a', 10)], { nodePool: waiting })).toEqual([]);
    expect(await commandsFor([claim('a', 40)], { nodePool: waiting })).toHaveLength(1);
  });

  test('deciding writes nothing', async () => {
    await commandsFor([claim('a')]);

    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodes.writes).toEqual([]);
    expect(orchestrations.startCalls).toBe(0);
  });
});

describe('emptiness validation', () => {
  const roomyPool: NodePool = {
    ...pool,
    spec: { ...pool.spec, disruption: { ...pool.spec.disruption, budgets: [{ nodes: '100%' }] } },
  };
  let fake: FakeLifecycle;
  beforeEach(() => {
    fake = fakeLifecycle();
    resetEventDedupe();
  });

  /** The NodePool, empty NodeClaims `names` and their Nodes as the API server holds them now. */
  const seed = (names: string[], nodePool = roomyPool) => {
    fake.nodePools.seed(nodePool);
    for (const name of names) {
      const nodeClaim = initializedNodeClaim(name, nodePool);
      fake.nodeClaims.seed(nodeClaim);
      fake.nodes.seed(nodeOf(nodeClaim));
    }
  };
  /** The command the method decided for the empty nodes `names` of the NodePool. */
  const decided = async (names: string[], nodePool = roomyPool): Promise<DisruptionCommand> => {
    const [command] = await emptinessMethod.computeCommands(
      methodPass(fake, new FakeOrchestrations(), {
        nodePool,
        nodeClaims: names.map((name) => initializedNodeClaim(name, nodePool)),
      }),
    );
    if (!command) throw new Error('no command decided');
    return command;
  };
  const validate = (command: DisruptionCommand) =>
    emptinessMethod.validate!(fake.deps, command, {
      orchestrations: new FakeOrchestrations(),
      invocationId: 'i',
    });

  /** An empty node's pods as its validation saw them: none, for the marks to compare again. */
  const asValidated = (name: string) => ({ name, uid: `uid-${name}`, podsDigest: activePodsDigest([]) });

  test('candidates still empty are kept, each with its pods as validated', async () => {
    seed(['a', 'b']);
    const command = await decided(['a', 'b']);

    expect(await validate(command)).toEqual({
      command: { ...command, candidates: [asValidated('a'), asValidated('b')] },
    });
  });

  test('a node a pod was scheduled onto since is dropped, the others kept', async () => {
    seed(['a', 'b']);
    const command = await decided(['a', 'b']);
    fake.workloads.pods.push(runningPod('late', 'aks-a', { cpu: '1' }));

    expect(await validate(command)).toEqual({
      command: { ...command, candidates: [asValidated('b')] },
    });
  });

  test('no candidate left, or the NodePool gone: the command is invalid', async () => {
    seed(['a']);
    const command = await decided(['a']);
    fake.workloads.pods.push(runningPod('late', 'aks-a', { cpu: '1' }));
    expect(await validate(command)).toEqual({ invalid: 'no candidate still qualifies' });

    await fake.nodePools.delete('general');
    expect(await validate(command)).toEqual({ invalid: 'NodePool general is gone' });
  });

  test('a NodeClaim deleted since is dropped as gone', async () => {
    seed(['a', 'b']);
    const command = await decided(['a', 'b']);
    const a = fake.nodeClaims.peek('a')!;
    await fake.nodeClaims.mergePatch('a', { metadata: { finalizers: null } });
    await fake.nodeClaims.delete(a.metadata.name);

    expect(await validate(command)).toEqual({
      command: { ...command, candidates: [asValidated('b')] },
    });
  });

  test('keeps only as many as the budget allows now', async () => {
    const oneAtATime: NodePool = {
      ...pool,
      spec: { ...pool.spec, disruption: { ...pool.spec.disruption, budgets: [{ nodes: '1' }] } },
    };
    seed(['a', 'b'], oneAtATime);
    const command = await decided(['a', 'b'], roomyPool);

    const validated = await validate(command);

    expect('command' in validated && validated.command.candidates).toHaveLength(1);
  });

  test('validating writes nothing', async () => {
    seed(['a', 'b']);
    await validate(await decided(['a', 'b']));

    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodes.writes).toEqual([]);
  });
});
