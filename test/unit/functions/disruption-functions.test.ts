// The disruption executor's functions as the app registers them (functions/disruption.ts): each activity
// taken from appDefinitions by its name and run on the in-memory fakes (a command of the emptiness method,
// which validates, and of expiration, which is forceful and replaces), and the executor replayed against
// histories this test writes: the validation's wait, the replacements' wait, completion and abandonment.
// Its history bound over continue-as-new is executor-history.test.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { replacementNameFor } from '../../../shared/lifecycle/disruption/replacements.js';
import type { Condition, NodeClaim } from '../../../shared/models/index.js';
import { ConditionTypes, WellKnown, type NodePool } from '../../../shared/models/karpenter.js';
import { DisruptionNames, TerminationNames } from '../../../shared/runtime/function-names.js';
import { appFunctions, type AppFunctions } from '../../support/app-functions.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { nodeClass, nodePool } from '../../support/fixtures.js';
import { covers } from '../../support/function-coverage.js';
import { initializedNodeClaim, nodeOf } from '../../support/method-pass.js';
import { d2sV5Offering } from '../../support/offering.js';
import { replayOrchestration, sequential } from '../../support/orchestrator-replay.js';

const pool: NodePool = {
  ...nodePool('general', 'default', { budgets: [{ nodes: '100%' }], consolidateAfter: '0s' }),
  metadata: { name: 'general', uid: 'pool-uid' },
};
const REPLACEMENT = replacementNameFor('general', 'uid-general-a', 0);

type Method = 'emptiness' | 'expiration';

function commandInput(method: Method, options: { replacements?: number; candidates?: string[] } = {}) {
  const candidates = options.candidates ?? ['general-a'];
  return {
    command: {
      method,
      reason: method === 'emptiness' ? 'Empty' : 'Expired',
      nodePool: { name: 'general', uid: 'pool-uid' },
      candidates: candidates.map((name) => ({ name, uid: `uid-${name}` })),
      replacements: Array.from({ length: options.replacements ?? 0 }, () => ({})),
      detail: 'as decided',
      decidedAt: FAKE_NOW.toISOString(),
      validateAfterSeconds: method === 'emptiness' ? 15 : 0,
      attempt: 0,
      consolidationType: method === 'emptiness' ? 'empty' : '',
    },
    pollSeconds: 5,
    timeoutMinutes: 30,
  };
}

const conditionOf = (nodeClaim: NodeClaim | undefined, type: string): Condition | undefined =>
  nodeClaim?.status?.conditions?.find((c) => c.type === type);
const disruptedTaint = expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' });

/** A candidate with its Node, marked for `reason` and tainted when `marked`. */
function seedCandidate(name: string, marked?: string): NodeClaim {
  const claim = initializedNodeClaim(name, pool);
  if (marked) {
    claim.status!.conditions!.push({
      type: ConditionTypes.disruptionReason,
      status: 'True',
      reason: marked,
      message: 'as decided',
      lastTransitionTime: FAKE_NOW.toISOString(),
    });
  }
  const node = nodeOf(claim);
  if (marked) node.spec.taints = [{ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }];
  fake.nodes.seed(node);
  return fake.nodeClaims.seed(claim);
}

let fake: FakeLifecycle;
let app: AppFunctions;
beforeEach(() => {
  fake = fakeLifecycle();
  app = appFunctions(fake);
  fake.nodePools.seed(pool);
  fake.nodeClasses.seed(nodeClass('default', 'Ubuntu2204'));
  fake.cloud.offering = d2sV5Offering();
});

describe(covers(DisruptionNames.validate), () => {
  test('an empty candidate that still qualifies is kept, with the pods it was validated on', async () => {
    seedCandidate('general-a');

    const validation = await app.value<{ command?: { candidates: unknown[] } }>(
      DisruptionNames.validate,
      commandInput('emptiness'),
    );

    expect(validation.command?.candidates).toEqual([
      { name: 'general-a', uid: 'uid-general-a', podsDigest: expect.any(String) },
    ]);
  });

  test('a NodePool deleted since the decision calls the command off', async () => {
    seedCandidate('general-a');
    await fake.nodePools.delete('general');

    expect(await app.value(DisruptionNames.validate, commandInput('emptiness'))).toEqual({
      invalid: 'NodePool general is gone',
    });
  });

  test('a candidate gone since the decision leaves nothing that qualifies', async () => {
    expect(await app.value(DisruptionNames.validate, commandInput('emptiness'))).toEqual({
      invalid: 'no candidate still qualifies',
    });
  });

  test('a method the app does not know is invalid, and one without validate passes as it is', async () => {
    const emptiness = commandInput('emptiness');
    const unknown = { ...emptiness, command: { ...emptiness.command, method: 'no-such-method' } };
    expect(await app.value(DisruptionNames.validate, unknown)).toEqual({
      invalid: 'no disruption method named no-such-method',
    });
    const expiration = commandInput('expiration');
    expect(await app.value(DisruptionNames.validate, expiration)).toEqual({ command: expiration.command });
  });
});

describe(covers(DisruptionNames.begin), () => {
  test('marks the candidate DisruptionReason=True for the method’s reason and taints its Node', async () => {
    const claim = seedCandidate('general-a');

    expect(await app.value(DisruptionNames.begin, commandInput('emptiness'))).toBe('ok');
    expect(conditionOf(fake.nodeClaims.peek('general-a'), ConditionTypes.disruptionReason)).toMatchObject({
      status: 'True',
      reason: 'Empty',
    });
    expect(fake.nodes.peek(claim.status!.nodeName!)?.spec.taints).toContainEqual(disruptedTaint);
  });

  test('a budget spent since the decision marks nothing: over-budget', async () => {
    fake.nodePools.seed({
      ...pool,
      spec: { ...pool.spec, disruption: { ...pool.spec.disruption, budgets: [{ nodes: '1' }] } },
    });
    seedCandidate('general-a');
    seedCandidate('general-b', 'Drifted');

    expect(await app.value(DisruptionNames.begin, commandInput('emptiness'))).toBe('over-budget');
    expect(conditionOf(fake.nodeClaims.peek('general-a'), ConditionTypes.disruptionReason)).toBeUndefined();
  });

  test('a candidate gone before its mark: nothing left to do', async () => {
    expect(await app.value(DisruptionNames.begin, commandInput('expiration'))).toBe('gone');
    expect(fake.nodeClaims.writes).toEqual([]);
  });
});

describe(covers(DisruptionNames.launch), () => {
  test('creates the replacement from the NodePool’s template and launches it: Pending', async () => {
    seedCandidate('general-a', 'Expired');

    const check = await app.value(DisruptionNames.launch, {
      input: commandInput('expiration', { replacements: 1 }),
      index: 0,
    });

    expect(check).toEqual({ status: 'Pending' });
    const replacement = fake.nodeClaims.peek(REPLACEMENT);
    expect(replacement?.metadata.labels?.[WellKnown.nodePoolLabel]).toBe('general');
    expect(replacement?.metadata.annotations?.['karpenter.azure.com/replacement-of']).toBe('general-a');
    expect(replacement?.status?.providerID).toBeDefined();
    expect(fake.cloud.created).toHaveLength(1);
  });

  test('a NodePool deleted meanwhile fails the replacement', async () => {
    await fake.nodePools.delete('general');

    expect(
      await app.value(DisruptionNames.launch, {
        input: commandInput('expiration', { replacements: 1 }),
        index: 0,
      }),
    ).toEqual({ status: 'Failed', why: 'NodePool general no longer exists' });
    expect(fake.nodeClaims.writes).toEqual([]);
  });

  test('a step for a replacement the command does not have is a bug, failing the activity', async () => {
    await expect(
      app.call(DisruptionNames.launch, { input: commandInput('expiration', { replacements: 1 }), index: 3 }),
    ).rejects.toThrow('command has no replacement 3');
  });
});

describe(covers(DisruptionNames.check), () => {
  const step = { input: commandInput('expiration', { replacements: 1 }), index: 0 };

  test('an Initialized replacement answers Initialized, one still launching Pending', async () => {
    const replacement = initializedNodeClaim(REPLACEMENT, pool);
    fake.nodeClaims.seed(replacement);
    expect(await app.value(DisruptionNames.check, step)).toEqual({ status: 'Initialized' });

    fake.nodeClaims.seed({ ...replacement, status: { providerID: replacement.status!.providerID! } });
    expect(await app.value(DisruptionNames.check, step)).toEqual({ status: 'Pending' });
  });

  test('one never launched answers NotLaunched, so the workflow launches it again', async () => {
    fake.nodeClaims.seed({ ...initializedNodeClaim(REPLACEMENT, pool), status: {} });

    expect(await app.value(DisruptionNames.check, step)).toEqual({ status: 'NotLaunched' });
  });

  test('a replacement deleted meanwhile has failed', async () => {
    expect(await app.value(DisruptionNames.check, step)).toEqual({
      status: 'Failed',
      why: `replacement ${REPLACEMENT} was deleted`,
    });
  });
});

describe(covers(DisruptionNames.checkNow), () => {
  const step = { input: commandInput('expiration', { replacements: 1 }), index: 0 };

  test('reads the replacement once: Initialized, Pending, NotLaunched or Failed, at once', async () => {
    const replacement = initializedNodeClaim(REPLACEMENT, pool);
    expect(await app.value(DisruptionNames.checkNow, step)).toEqual({
      status: 'Failed',
      why: `replacement ${REPLACEMENT} was deleted`,
    });
    fake.nodeClaims.seed({ ...replacement, status: {} });
    expect(await app.value(DisruptionNames.checkNow, step)).toEqual({ status: 'NotLaunched' });
    fake.nodeClaims.seed({ ...replacement, status: { providerID: replacement.status!.providerID! } });
    expect(await app.value(DisruptionNames.checkNow, step)).toEqual({ status: 'Pending' });
    fake.nodeClaims.seed(replacement);
    expect(await app.value(DisruptionNames.checkNow, step)).toEqual({ status: 'Initialized' });
  });
});

describe(covers(DisruptionNames.orchestrationV2), () => {
  const seconds = (at: Date) => (at.getTime() - FAKE_NOW.getTime()) / 1000;

  test('launches the replacement, waits for its wake, and deletes the candidate when it says Initialized', async () => {
    const run = await replayOrchestration({
      name: DisruptionNames.orchestrationV2,
      handler: app.orchestration(DisruptionNames.orchestrationV2).handler,
      instanceId: 'expire-uid-general-a',
      input: commandInput('expiration', { replacements: 1 }),
      start: FAKE_NOW,
      respond: (pending) => {
        const wake = pending.find((p) => p.action.kind === 'externalEvent');
        if (wake) {
          const at = new Date(FAKE_NOW.getTime() + 20_000);
          return { to: wake, answer: { raise: { replacement: REPLACEMENT, status: 'Initialized' }, at } };
        }
        const next = pending.find((p) => p.action.kind === 'activity');
        if (!next || next.action.kind !== 'activity') return undefined;
        const name = next.action.name;
        if (name === DisruptionNames.begin) return { to: next, answer: { result: 'ok' } };
        if (name === DisruptionNames.launch) return { to: next, answer: { result: { status: 'Pending' } } };
        if (name === DisruptionNames.complete) return { to: next, answer: { result: ['general-a'] } };
        return undefined;
      },
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Disrupted', deleted: ['general-a'], replacements: [REPLACEMENT] },
    });
    // No check and no poll: the wake, then the deletion.
    expect(run.answered.map((a) => [a.name, seconds(a.at)])).toEqual([
      [DisruptionNames.begin, 0],
      [DisruptionNames.launch, 0],
      [`event:${DisruptionNames.replacementChanged}`, 20],
      [DisruptionNames.complete, 20],
    ]);
  });
});

describe(covers(DisruptionNames.complete), () => {
  test('deletes every candidate, says it was replaced, and starts its termination at once', async () => {
    seedCandidate('general-a', 'Expired');

    const deleted = await app.value(
      DisruptionNames.complete,
      commandInput('expiration', { replacements: 1 }),
    );

    expect(deleted).toEqual(['general-a']);
    expect(fake.nodeClaims.peek('general-a')?.metadata.deletionTimestamp).toBeDefined();
    expect(fake.events.map((e) => [e.target.name, e.reason])).toContainEqual([
      'general-a',
      'DisruptionReplaced',
    ]);
    expect(app.orchestrations.started.map((s) => [s.name, s.instanceId])).toEqual([
      [TerminationNames.orchestrationV2, 'terminate-uid-general-a'],
    ]);
  });

  test('a candidate gone or already deleting is not deleted again', async () => {
    seedCandidate('general-b', 'Expired');
    await fake.nodeClaims.delete('general-b');
    const writes = fake.nodeClaims.writes.length;

    const deleted = await app.value(
      DisruptionNames.complete,
      commandInput('expiration', { candidates: ['general-a', 'general-b'] }),
    );

    expect(deleted).toEqual([]);
    expect(fake.nodeClaims.writes).toHaveLength(writes);
    expect(app.orchestrations.started).toEqual([]);
  });
});

describe(covers(DisruptionNames.abandon), () => {
  const input = commandInput('expiration', { replacements: 1 });

  test('deletes the replacement that never initialized and puts the candidate back in service', async () => {
    const claim = seedCandidate('general-a', 'Expired');
    fake.nodeClaims.seed({ ...initializedNodeClaim(REPLACEMENT, pool), status: {} });

    await app.value(DisruptionNames.abandon, { input, why: 'the replacement failed to launch' });

    // Deleted: held by its termination finalizer until termination removes its VM.
    expect(fake.nodeClaims.peek(REPLACEMENT)?.metadata.deletionTimestamp).toBeDefined();
    const released = fake.nodeClaims.peek('general-a');
    expect(conditionOf(released, ConditionTypes.disruptionReason)).toBeUndefined();
    // Without a command key the failure is held on the node, with a backoff.
    expect(released?.metadata.annotations).toMatchObject({
      'karpenter.azure.com/replacement-attempts': '1',
      'karpenter.azure.com/replacement-backoff-until': expect.any(String),
    });
    expect(fake.nodes.peek(claim.status!.nodeName!)?.spec.taints ?? []).not.toContainEqual(disruptedTaint);
    expect(fake.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'DisruptionReplacementFailed']]);
  });

  test('a replacement that initialized after all is kept: it is a working node', async () => {
    seedCandidate('general-a', 'Expired');
    fake.nodeClaims.seed(initializedNodeClaim(REPLACEMENT, pool));

    await app.value(DisruptionNames.abandon, { input, why: 'timed out' });

    expect(fake.nodeClaims.peek(REPLACEMENT)?.metadata.deletionTimestamp).toBeUndefined();
  });

  test('a candidate no longer marked for the reason (released already) is left alone', async () => {
    seedCandidate('general-a');

    await app.value(DisruptionNames.abandon, { input, why: 'timed out' });

    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.events).toEqual([]);
  });
});

describe(covers(DisruptionNames.orchestration), () => {
  const replay = (input: ReturnType<typeof commandInput>, respond: Parameters<typeof sequential>[0]) =>
    replayOrchestration({
      name: DisruptionNames.orchestration,
      handler: app.orchestration(DisruptionNames.orchestration).handler,
      instanceId: 'emptiness-uid-general-a',
      input,
      start: FAKE_NOW,
      respond: sequential(respond),
    });
  const seconds = (at: Date) => (at.getTime() - FAKE_NOW.getTime()) / 1000;

  test('waits out the validation delay, validates, marks, and deletes the candidates: Disrupted', async () => {
    const input = commandInput('emptiness');
    const validated = { ...input.command, detail: 'as validated' };
    const run = await replay(input, (name, _input) => {
      if (name === DisruptionNames.validate) return { result: { command: validated } };
      if (name === DisruptionNames.begin) return { result: 'ok' };
      if (name === DisruptionNames.complete) return { result: ['general-a'] };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Disrupted', deleted: ['general-a'], replacements: [] },
    });
    expect(run.answered.map((a) => [a.name, seconds(a.at)])).toEqual([
      ['timer', 15],
      [DisruptionNames.validate, 15],
      [DisruptionNames.begin, 15],
      [DisruptionNames.complete, 15],
    ]);
    // What begin and complete work on is the validated command.
    expect(run.answered[2]?.input).toMatchObject({ command: { detail: 'as validated' } });
  });

  test('a validation that calls it off ends Invalid without a mark', async () => {
    const run = await replay(commandInput('emptiness'), (name) =>
      name === DisruptionNames.validate ? { result: { invalid: 'no longer empty' } } : undefined,
    );

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Invalid', why: 'no longer empty' },
    });
    expect(run.scheduled.filter((a) => a.kind === 'activity').map((a) => 'name' in a && a.name)).toEqual([
      DisruptionNames.validate,
    ]);
  });

  test('launches the replacement, polls until it is Initialized, then deletes the candidate', async () => {
    const run = await replay(commandInput('expiration', { replacements: 1 }), (name, _input, call) => {
      if (name === DisruptionNames.begin) return { result: 'ok' };
      if (name === DisruptionNames.launch) return { result: { status: 'Pending' } };
      if (name === DisruptionNames.check)
        return { result: call < 2 ? { status: 'Pending' } : { status: 'Initialized' } };
      if (name === DisruptionNames.complete) return { result: ['general-a'] };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Disrupted', deleted: ['general-a'], replacements: [REPLACEMENT] },
    });
    // Expiration does not validate: no wait before the mark.
    expect(run.answered.map((a) => [a.name, seconds(a.at)])).toEqual([
      [DisruptionNames.begin, 0],
      [DisruptionNames.launch, 0],
      ['timer', 5],
      [DisruptionNames.check, 5],
      ['timer', 10],
      [DisruptionNames.check, 10],
      [DisruptionNames.complete, 10],
    ]);
  });

  test('a replacement that fails is abandoned, with why, instead of deleting the candidate', async () => {
    const why = 'replacement failed to launch: SKUNotAvailable';
    const run = await replay(commandInput('expiration', { replacements: 1 }), (name) => {
      if (name === DisruptionNames.begin) return { result: 'ok' };
      if (name === DisruptionNames.launch) return { result: { status: 'Pending' } };
      if (name === DisruptionNames.check) return { result: { status: 'Failed', why } };
      if (name === DisruptionNames.abandon) return { result: null };
      return undefined;
    });

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'Abandoned', why } });
    expect(run.answered.at(-1)).toMatchObject({ name: DisruptionNames.abandon, input: { why } });
    expect(run.answered.some((a) => a.name === DisruptionNames.complete)).toBe(false);
  });

  test('a replacement not Initialized within the timeout is abandoned at the deadline', async () => {
    const input = { ...commandInput('expiration', { replacements: 1 }), timeoutMinutes: 1 };
    const run = await replay(input, (name) => {
      if (name === DisruptionNames.begin) return { result: 'ok' };
      if (name === DisruptionNames.launch || name === DisruptionNames.check)
        return { result: { status: 'Pending' } };
      if (name === DisruptionNames.abandon) return { result: null };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: { outcome: 'Abandoned', why: 'the replacement was not Initialized within 1 minutes' },
    });
    expect(seconds(run.answered.at(-1)!.at)).toBe(60);
  });

  test('candidates gone at the mark end the workflow: CandidatesGone', async () => {
    const run = await replay(commandInput('expiration', { replacements: 1 }), (name) =>
      name === DisruptionNames.begin ? { result: 'gone' } : undefined,
    );

    expect(run.result).toMatchObject({ status: 'completed', output: { outcome: 'CandidatesGone' } });
    expect(run.answered.map((a) => a.name)).toEqual([DisruptionNames.begin]);
  });
});
