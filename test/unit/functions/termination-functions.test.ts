// The termination workflow's functions as the app registers them (functions/termination.ts): each
// activity taken from appDefinitions by its name and run on the in-memory fakes, and the termination
// orchestrators (both versions) replayed against histories this test writes: the drain loop, the VM
// wait, the finish, and the continuation once an execution has used its task budget. Six hours of a blocked drain on the
// durable engine are termination-history.test.ts.
import type { V1Pod } from '@kubernetes/client-node';
import { beforeEach, describe, expect, test } from 'vitest';
import type { ActivityTimer } from '../../../shared/lifecycle/durable/activity-wait.js';
import { launchMonitorInstanceId } from '../../../shared/lifecycle/launch/launch-monitor.js';
import { advanceNodeClaimTermination } from '../../../shared/lifecycle/termination/termination-v2.js';
import { WellKnown } from '../../../shared/models/karpenter.js';
import { LaunchMonitorNames, TerminationNames } from '../../../shared/runtime/function-names.js';
import { appFunctions, type AppFunctions } from '../../support/app-functions.js';
import { FakeApiError } from '../../support/fake-api-error.js';
import { FAKE_NOW, fakeLifecycle, type FakeLifecycle } from '../../support/fake-lifecycle.js';
import { covers } from '../../support/function-coverage.js';
import { replayOrchestration, sequential } from '../../support/orchestrator-replay.js';
import { condition, node, nodeClaim } from '../registration-fixtures.js';

const UID = 'uid-nodeclaim-1';
const VM = 'aks-default-abcde';
const input = {
  nodeClaim: { name: 'default-abcde', uid: UID },
  vmName: VM,
  pollIntervalSeconds: 10,
  drainPollSeconds: 5,
};

function deletedClaim(uid = UID) {
  const claim = nodeClaim({
    uid,
    conditions: [condition('Registered', 'True')],
    deletionTimestamp: FAKE_NOW.toISOString(),
  });
  claim.metadata.finalizers = [WellKnown.terminationFinalizer];
  return claim;
}

const webPod: V1Pod = {
  metadata: {
    name: 'web',
    namespace: 'apps',
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-rs', uid: 'owner-web' }],
  },
  spec: { nodeName: VM, containers: [{ name: 'app' }] },
  status: { phase: 'Running', startTime: new Date(FAKE_NOW.getTime() - 3_600_000) },
};

let fake: FakeLifecycle;
let app: AppFunctions;
beforeEach(() => {
  fake = fakeLifecycle();
  app = appFunctions(fake);
});

describe(covers(TerminationNames.drain), () => {
  test('taints the Node and evicts its pod, answering Draining while the pod is terminating', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({}));
    fake.pods.seed(webPod);

    const progress = await app.value(TerminationNames.drain, { nodeClaim: input.nodeClaim });

    expect(progress).toEqual({ status: 'Draining', waiting: 1, blockedByPdb: 0, deleted: 0 });
    expect(fake.pods.evicted).toEqual(['apps/web']);
    expect(fake.nodes.peek(VM)?.spec.taints).toContainEqual(
      expect.objectContaining({ key: 'karpenter.sh/disrupted', effect: 'NoSchedule' }),
    );
  });

  test('a Node with nothing left to evict is Drained', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({}));

    expect(await app.value(TerminationNames.drain, { nodeClaim: input.nodeClaim })).toEqual({
      status: 'Drained',
    });
    expect(fake.pods.evicted).toEqual([]);
  });

  test('a PodDisruptionBudget refusing the eviction counts as blocked, to be tried on the next pass', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({}));
    fake.pods.seed(webPod);
    fake.pods.refusals.set('apps/web', new FakeApiError(429, 'would violate the pod disruption budget'));

    expect(await app.value(TerminationNames.drain, { nodeClaim: input.nodeClaim })).toEqual({
      status: 'Draining',
      waiting: 1,
      blockedByPdb: 1,
      deleted: 0,
    });
    expect(fake.pods.evicted).toEqual([]);
  });

  test('a NodeClaim recreated under its name is not drained: the one terminating is gone', async () => {
    fake.nodeClaims.seed(deletedClaim('uid-another'));
    fake.nodes.seed(node({}));
    fake.pods.seed(webPod);

    expect(await app.value(TerminationNames.drain, { nodeClaim: input.nodeClaim })).toEqual({
      status: 'Drained',
    });
    expect(fake.pods.evicted).toEqual([]);
    expect(fake.nodes.writes).toEqual([]);
  });
});

describe(covers(TerminationNames.deleteVm), () => {
  test('stops the running launch monitor and deletes the VM, answering Deleting', async () => {
    fake.cloud.seedInstance('default-abcde');
    app.orchestrations.seed(launchMonitorInstanceId(UID), LaunchMonitorNames.orchestration, 'Running');

    expect(await app.value(TerminationNames.deleteVm, input)).toBe('Deleting');
    expect(fake.cloud.deleted).toEqual([VM]);
    expect(app.orchestrations.terminated).toEqual([launchMonitorInstanceId(UID)]);
  });

  test('a VM already deleting is not deleted again, and one ARM no longer has is Gone', async () => {
    fake.cloud.seedInstance('default-abcde', { state: 'Deleting' });

    expect(await app.value(TerminationNames.deleteVm, input)).toBe('Deleting');
    expect(fake.cloud.deleted).toEqual([]);

    fake.cloud.instances.clear();
    expect(await app.value(TerminationNames.deleteVm, input)).toBe('Gone');
  });

  test('a VM under the name that is not this NodeClaim’s is never deleted', async () => {
    fake.cloud.seedInstance('default-abcde', { tags: { 'karpenter.azure.com_cluster': 'another-cluster' } });

    expect(await app.value(TerminationNames.deleteVm, input)).toBe('Gone');
    expect(fake.cloud.deleted).toEqual([]);
  });

  test('ARM throttling the delete is transient: the workflow waits and calls again', async () => {
    fake.cloud.seedInstance('default-abcde');
    fake.cloud.failNext('delete', new FakeApiError(429, 'too many requests'));

    expect(await app.call(TerminationNames.deleteVm, input)).toEqual({ transient: 'too many requests' });
    expect(fake.cloud.deleted).toEqual([]);
  });
});

describe(covers(TerminationNames.finish), () => {
  test('deletes the Node (releasing its finalizer) and removes the NodeClaim’s, so both go', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({ finalizers: [WellKnown.terminationFinalizer] }));

    await app.value(TerminationNames.finish, input);

    expect(fake.nodes.peek(VM)).toBeUndefined();
    expect(fake.nodes.writes.map((w) => w.verb)).toEqual(['patch', 'delete']);
    expect(fake.nodeClaims.peek('default-abcde')).toBeUndefined();
  });

  test('a NodeClaim already gone (a repeated call) changes nothing', async () => {
    fake.nodes.seed(node({}));

    await app.value(TerminationNames.finish, input);

    expect(fake.nodes.writes).toEqual([]);
    expect(fake.nodeClaims.writes).toEqual([]);
    expect(fake.nodes.peek(VM)).toBeDefined();
  });

  test('a NodeClaim that never registered a Node only loses its finalizer', async () => {
    fake.nodeClaims.seed(deletedClaim());

    await app.value(TerminationNames.finish, input);

    expect(fake.nodes.writes).toEqual([]);
    expect(fake.nodeClaims.peek('default-abcde')).toBeUndefined();
  });
});

describe(covers(TerminationNames.orchestration), () => {
  const replay = (respond: Parameters<typeof sequential>[0], maxEpisodes?: number) =>
    replayOrchestration({
      name: TerminationNames.orchestration,
      handler: app.orchestration(TerminationNames.orchestration).handler,
      instanceId: `terminate-${UID}`,
      input,
      start: FAKE_NOW,
      respond: sequential(respond),
      ...(maxEpisodes ? { maxEpisodes } : {}),
    });
  const draining = { status: 'Draining', waiting: 1, blockedByPdb: 0, deleted: 0 };

  test('drains until Drained, deletes the VM until Gone, then finishes: Terminated', async () => {
    const run = await replay((name, _input, call) => {
      if (name === TerminationNames.drain) return { result: call < 3 ? draining : { status: 'Drained' } };
      if (name === TerminationNames.deleteVm) return { result: call < 2 ? 'Deleting' : 'Gone' };
      if (name === TerminationNames.finish) return { result: null };
      return undefined;
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: 'Terminated',
      customStatus: { phase: 'DeletingVm', passes: 5, startedAt: FAKE_NOW.toISOString() },
    });
    expect(run.answered.map((a) => [a.name, (a.at.getTime() - FAKE_NOW.getTime()) / 1000])).toEqual([
      [TerminationNames.drain, 0],
      ['timer', 5],
      [TerminationNames.drain, 5],
      ['timer', 10],
      [TerminationNames.drain, 10],
      [TerminationNames.deleteVm, 10],
      ['timer', 20],
      [TerminationNames.deleteVm, 20],
      [TerminationNames.finish, 20],
    ]);
    expect(run.answered[0]?.input).toEqual(input);
  });

  test('a drain that never finishes continues as new after its task budget, carrying its progress', async () => {
    const run = await replay((name) => (name === TerminationNames.drain ? { result: draining } : undefined));

    expect(run.result.status).toBe('continuedAsNew');
    const next = run.result.status === 'continuedAsNew' ? JSON.parse(run.result.input ?? '{}') : {};
    // 100 tasks: 50 passes of a drain and a wait.
    expect(next).toEqual({
      ...input,
      continued: {
        phase: 'Draining',
        passes: 50,
        continuations: 1,
        startedAt: FAKE_NOW.toISOString(),
        lastDrain: draining,
      },
    });
    expect(run.answered.filter((a) => a.name === TerminationNames.drain)).toHaveLength(50);
    expect(run.answered.some((a) => a.name === TerminationNames.deleteVm)).toBe(false);
  });

  test('a continued execution picks the count up where it was and goes on to the VM', async () => {
    const continued = {
      phase: 'DeletingVm',
      passes: 50,
      continuations: 1,
      startedAt: '2026-11-30T11:00:00.000Z',
    };
    const run = await replayOrchestration({
      name: TerminationNames.orchestration,
      handler: app.orchestration(TerminationNames.orchestration).handler,
      instanceId: `terminate-${UID}`,
      input: { ...input, continued },
      start: FAKE_NOW,
      respond: sequential((name) => {
        if (name === TerminationNames.deleteVm) return { result: 'Gone' };
        if (name === TerminationNames.finish) return { result: null };
        return undefined;
      }),
    });

    expect(run.result).toMatchObject({
      status: 'completed',
      output: 'Terminated',
      customStatus: { passes: 51, continuations: 1, startedAt: '2026-11-30T11:00:00.000Z' },
    });
    expect(run.answered.map((a) => a.name)).toEqual([TerminationNames.deleteVm, TerminationNames.finish]);
  });

  test('a drain activity that fails (not transiently) fails the orchestration', async () => {
    const run = await replay((name) =>
      name === TerminationNames.drain ? { failure: 'TypeError: cannot read properties' } : undefined,
    );

    expect(run.result.status).toBe('failed');
    expect(run.result.status === 'failed' ? run.result.message : '').toContain('cannot read properties');
  });
});

/** Sleeps nothing; counts the waits it was asked for as the time spent. */
function countingTimer(): ActivityTimer & { slept: number[] } {
  const slept: number[] = [];
  return {
    slept,
    sleep: async (ms) => {
      slept.push(ms);
    },
    elapsedMs: () => slept.reduce((sum, ms) => sum + ms, 0),
  };
}

describe(covers(TerminationNames.advance), () => {
  const advance = (phase: 'Draining' | 'DeletingVm', timer = countingTimer()) =>
    advanceNodeClaimTermination(
      fake.deps,
      { termination: input, phase, windowSeconds: 45 },
      { orchestrations: app.orchestrations },
      timer,
    );

  test('a Node with nothing to evict: drains, deletes the VM and finishes in one call once it is gone', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({ finalizers: [WellKnown.terminationFinalizer] }));
    fake.cloud.seedInstance('default-abcde');
    app.orchestrations.seed(launchMonitorInstanceId(UID), LaunchMonitorNames.orchestrationV2, 'Running');
    const timer = countingTimer();
    // ARM forgets the VM during the second wait.
    const sleep = timer.sleep;
    timer.sleep = async (ms) => {
      await sleep(ms);
      if (timer.slept.length === 2) fake.cloud.instances.clear();
    };

    // One drain pass, then three looks at the VM.
    expect(await advance('Draining', timer)).toEqual({
      phase: 'Terminated',
      drain: { status: 'Drained' },
      passes: 4,
    });
    expect(fake.cloud.deleted).toEqual([VM]);
    expect(app.orchestrations.terminated).toEqual([launchMonitorInstanceId(UID)]);
    expect(timer.slept).toEqual([10_000, 10_000]);
    expect(fake.nodes.peek(VM)).toBeUndefined();
    expect(fake.nodeClaims.peek('default-abcde')).toBeUndefined();
  });

  test('a drain that leaves pods passes again at the drain’s pace until the window ends, deleting nothing', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({}));
    fake.pods.seed(webPod);
    fake.cloud.seedInstance('default-abcde');
    const timer = countingTimer();

    expect(await advance('Draining', timer)).toMatchObject({
      phase: 'Draining',
      drain: { status: 'Draining' },
      passes: 10,
    });
    // 45 s of window at the 5 s drain interval: nine waits, ten passes; the pod evicted once.
    expect(timer.slept).toEqual(Array.from({ length: 9 }, () => 5_000));
    expect(fake.pods.evicted.length).toBe(1);
    expect(fake.cloud.deleted).toEqual([]);
  });

  test('pods that leave during the window: the same call goes on to the VM', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({}));
    fake.pods.seed(webPod);
    fake.cloud.seedInstance('default-abcde');
    const timer = countingTimer();
    timer.sleep = async (ms) => {
      timer.slept.push(ms);
      // The kubelet finishes the evicted pod during the first wait; ARM forgets the VM during the third.
      if (timer.slept.length === 1) fake.pods.remove({ namespace: 'apps', name: 'web' });
      if (timer.slept.length === 3) fake.cloud.instances.clear();
    };

    expect(await advance('Draining', timer)).toEqual({
      phase: 'Terminated',
      drain: { status: 'Drained' },
      passes: 5,
    });
    expect(timer.slept).toEqual([5_000, 10_000, 10_000]);
    expect(fake.cloud.deleted).toEqual([VM]);
  });

  test('a VM still deleting when the window ends answers DeletingVm; drained before, the Node is not drained again', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.nodes.seed(node({}));
    fake.pods.seed(webPod);
    fake.cloud.seedInstance('default-abcde', { state: 'Deleting' });
    const timer = countingTimer();

    expect(await advance('DeletingVm', timer)).toEqual({ phase: 'DeletingVm', passes: 5 });
    // 45 s of window at the 10 s poll: four waits, five checks.
    expect(timer.slept).toEqual([10_000, 10_000, 10_000, 10_000]);
    expect(fake.pods.evicted).toEqual([]);
    expect(fake.nodeClaims.peek('default-abcde')).toBeDefined();
  });

  test('registered: ARM throttling the delete is a transient answer the workflow waits out', async () => {
    fake.nodeClaims.seed(deletedClaim());
    fake.cloud.seedInstance('default-abcde');
    fake.cloud.failNext('delete', new FakeApiError(429, 'too many requests'));

    expect(
      await app.call(TerminationNames.advance, {
        termination: input,
        phase: 'DeletingVm',
        windowSeconds: 45,
      }),
    ).toEqual({ transient: 'too many requests' });
    expect(fake.cloud.deleted).toEqual([]);
  });
});

describe(covers(TerminationNames.orchestrationV2), () => {
  const replay = (respond: Parameters<typeof sequential>[0], continued?: object) =>
    replayOrchestration({
      name: TerminationNames.orchestrationV2,
      handler: app.orchestration(TerminationNames.orchestrationV2).handler,
      instanceId: `terminate-${UID}`,
      input: continued ? { ...input, continued } : input,
      start: FAKE_NOW,
      respond: sequential(respond),
    });
  const draining = { status: 'Draining', waiting: 1, blockedByPdb: 0, deleted: 0 };

  test('one call that drains, deletes and finishes is the whole termination', async () => {
    const run = await replay((name) =>
      name === TerminationNames.advance
        ? { result: { phase: 'Terminated', drain: { status: 'Drained' } } }
        : undefined,
    );

    expect(run.result).toMatchObject({
      status: 'completed',
      output: 'Terminated',
      customStatus: { phase: 'DeletingVm', passes: 1, lastDrain: { status: 'Drained' } },
    });
    expect(run.answered.map((a) => [a.name, a.input])).toEqual([
      [TerminationNames.advance, { termination: input, phase: 'Draining', windowSeconds: 45 }],
    ]);
  });

  test('a waiting drain is passed again after the drain interval; a deleting VM is called again at once', async () => {
    const run = await replay((name, _input, call) => {
      if (name !== TerminationNames.advance) return undefined;
      if (call < 3) return { result: { phase: 'Draining', drain: draining } };
      if (call === 3) return { result: { phase: 'DeletingVm', drain: { status: 'Drained' } } };
      return { result: { phase: 'Terminated' } };
    });

    expect(run.result).toMatchObject({ status: 'completed', output: 'Terminated' });
    expect(
      run.answered.map((a) => [
        a.name,
        (a.at.getTime() - FAKE_NOW.getTime()) / 1000,
        (a.input as { phase?: string } | undefined)?.phase,
      ]),
    ).toEqual([
      [TerminationNames.advance, 0, 'Draining'],
      ['timer', 5, undefined],
      [TerminationNames.advance, 5, 'Draining'],
      ['timer', 10, undefined],
      [TerminationNames.advance, 10, 'Draining'],
      [TerminationNames.advance, 10, 'DeletingVm'],
    ]);
  });

  test('a drain that never finishes continues as new after its task budget, carrying its progress', async () => {
    const run = await replay((name) =>
      name === TerminationNames.advance ? { result: { phase: 'Draining', drain: draining } } : undefined,
    );

    expect(run.result.status).toBe('continuedAsNew');
    const next = run.result.status === 'continuedAsNew' ? JSON.parse(run.result.input ?? '{}') : {};
    expect(next).toEqual({
      ...input,
      continued: {
        phase: 'Draining',
        passes: 50,
        continuations: 1,
        startedAt: FAKE_NOW.toISOString(),
        lastDrain: draining,
      },
    });
  });

  test('a continued execution picks the phase up where it was', async () => {
    const continued = {
      phase: 'DeletingVm',
      passes: 50,
      continuations: 1,
      startedAt: '2026-11-30T11:00:00.000Z',
    };
    const run = await replay(
      (name) => (name === TerminationNames.advance ? { result: { phase: 'Terminated' } } : undefined),
      continued,
    );

    expect(run.result).toMatchObject({
      status: 'completed',
      customStatus: { passes: 51, continuations: 1, startedAt: '2026-11-30T11:00:00.000Z' },
    });
    expect(run.answered[0]?.input).toMatchObject({ phase: 'DeletingVm' });
  });
});
